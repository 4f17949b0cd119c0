/**
 * The object `trace` and `diagnose` are asked about: `<kind>/<namespace>/<name>`, the kind as a
 * short name (`vmi`, `vm`, `migration`) or KubeVirt's (`virtualmachineinstance`, `vmim`…).
 * Bad input is a {@link BadTargetError} that says what was expected.
 */
import { isKey } from '../../shared/queue/message.ts';

/** Input that names no object; the CLI prints it as one line with exit 2, the dashboard as a 400. */
export class BadTargetError extends Error {}

/** The kinds these commands know, by their short name. */
export const TARGET_KINDS = ['vmi', 'vm', 'migration', 'pool'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

const ALIASES: Readonly<Record<string, TargetKind>> = {
  vmi: 'vmi',
  vmis: 'vmi',
  virtualmachineinstance: 'vmi',
  virtualmachineinstances: 'vmi',
  vm: 'vm',
  vms: 'vm',
  virtualmachine: 'vm',
  virtualmachines: 'vm',
  migration: 'migration',
  migrations: 'migration',
  vmim: 'migration',
  virtualmachineinstancemigration: 'migration',
  virtualmachineinstancemigrations: 'migration',
  pool: 'pool',
  pools: 'pool',
  vmpool: 'pool',
  virtualmachinepool: 'pool',
  virtualmachinepools: 'pool',
};

/** One object: its kind, namespace and name, and its controller key `namespace/name`. */
export interface Target {
  readonly kind: TargetKind;
  readonly namespace: string;
  readonly name: string;
  readonly key: string;
}

/** `vmi/default/testvmi` → a {@link Target}; anything else throws a {@link BadTargetError}. */
export function parseTarget<K extends TargetKind = TargetKind>(text: string | undefined, kinds: readonly K[] = TARGET_KINDS as readonly TargetKind[] as readonly K[]): Target & { readonly kind: K } {
  const expected = `expected <${kinds.join('|')}>/<namespace>/<name>`;
  if (text === undefined || text === '') throw new BadTargetError(`missing object: ${expected}`);
  const parts = text.split('/');
  if (parts.length !== 3) throw new BadTargetError(`'${text}': ${expected}`);
  const [k, namespace, name] = parts as [string, string, string];
  const kind = ALIASES[k.toLowerCase()];
  if (!kind || !(kinds as readonly TargetKind[]).includes(kind)) throw new BadTargetError(`'${text}': unknown kind '${k}', ${expected}`);
  const key = `${namespace}/${name}`;
  if (!isKey(key)) throw new BadTargetError(`'${text}': namespace and name must be lower-case DNS names`);
  return { kind: kind as K, namespace, name, key };
}

/** `vmi/default/testvmi`. */
export function showTarget(t: Target): string {
  return `${t.kind}/${t.key}`;
}
