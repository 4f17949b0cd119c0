/**
 * The object `trace` and `diagnose` are asked about: `<kind>/<namespace>/<name>`, or
 * `<kind>/<name>` for a cluster-scoped kind (`node/node01`); the kind as a short name (`vmi`,
 * `vm`, `migration`, `replicaset`, `pool`, `node`) or KubeVirt's (`virtualmachineinstance`,
 * `vmim`, `vmirs`…). Bad input is a {@link BadTargetError} that says what was expected.
 */
import { isKey } from '../shared/queue/message.ts';

/** Input that names no object; the CLI prints it as one line with exit 2, the dashboard as a 400. */
export class BadTargetError extends Error {}

/** The kinds these commands know, by their short name. */
export const TARGET_KINDS = ['vmi', 'vm', 'migration', 'replicaset', 'pool', 'node', 'snapshot', 'restore'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** Kinds whose objects have no namespace: their target is `<kind>/<name>` and their key the name. */
export const CLUSTER_SCOPED_KINDS: readonly TargetKind[] = ['node'];

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
  replicaset: 'replicaset',
  replicasets: 'replicaset',
  vmirs: 'replicaset',
  vmirss: 'replicaset',
  virtualmachineinstancereplicaset: 'replicaset',
  virtualmachineinstancereplicasets: 'replicaset',
  snapshot: 'snapshot',
  snapshots: 'snapshot',
  vmsnapshot: 'snapshot',
  virtualmachinesnapshot: 'snapshot',
  virtualmachinesnapshots: 'snapshot',
  restore: 'restore',
  restores: 'restore',
  vmrestore: 'restore',
  virtualmachinerestore: 'restore',
  virtualmachinerestores: 'restore',
  node: 'node',
  nodes: 'node',
  no: 'node',
};

/** One object: its kind, namespace and name, and its controller key `namespace/name` (a bare name when cluster-scoped). */
export interface Target {
  readonly kind: TargetKind;
  /** '' for a cluster-scoped kind. */
  readonly namespace: string;
  readonly name: string;
  readonly key: string;
}

/** True when `text` starts with a cluster-scoped kind (`node/…`): its target has no namespace. */
export function isClusterScopedTarget(text: string): boolean {
  const kind = ALIASES[(text.split('/')[0] ?? '').toLowerCase()];
  return kind !== undefined && CLUSTER_SCOPED_KINDS.includes(kind);
}

/** `vmi/default/testvmi` or `node/node01` → a {@link Target}; anything else throws a {@link BadTargetError}. */
export function parseTarget<K extends TargetKind = TargetKind>(text: string | undefined, kinds: readonly K[] = TARGET_KINDS as readonly TargetKind[] as readonly K[]): Target & { readonly kind: K } {
  const namespaced = kinds.filter((k) => !CLUSTER_SCOPED_KINDS.includes(k));
  const cluster = kinds.filter((k) => CLUSTER_SCOPED_KINDS.includes(k));
  const expected = `expected ${[namespaced.length ? `<${namespaced.join('|')}>/<namespace>/<name>` : '', cluster.length ? `<${cluster.join('|')}>/<name>` : ''].filter(Boolean).join(' or ')}`;
  if (text === undefined || text === '') throw new BadTargetError(`missing object: ${expected}`);
  const parts = text.split('/');
  const k = parts[0]!;
  const kind = ALIASES[k.toLowerCase()];
  if (parts.length !== 2 && parts.length !== 3) throw new BadTargetError(`'${text}': ${expected}`);
  if (!kind || !(kinds as readonly TargetKind[]).includes(kind)) throw new BadTargetError(`'${text}': unknown kind '${k}', ${expected}`);
  const clusterScoped = CLUSTER_SCOPED_KINDS.includes(kind);
  if (parts.length !== (clusterScoped ? 2 : 3)) throw new BadTargetError(`'${text}': ${clusterScoped ? `a ${kind} has no namespace: ${kind}/<name>` : expected}`);
  const namespace = clusterScoped ? '' : parts[1]!;
  const name = parts.at(-1)!;
  const key = clusterScoped ? name : `${namespace}/${name}`;
  if (!isKey(key, clusterScoped ? 'cluster' : 'namespaced')) throw new BadTargetError(`'${text}': ${clusterScoped ? 'the name must be a lower-case DNS name' : 'namespace and name must be lower-case DNS names'}`);
  return { kind: kind as K, namespace, name, key };
}

/** `vmi/default/testvmi`, `node/node01`. */
export function showTarget(t: Target): string {
  return `${t.kind}/${t.key}`;
}
