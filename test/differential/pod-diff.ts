/**
 * Field-by-field comparison of our launcher pod with KubeVirt's (docs/fidelity.md). Both pods
 * have passed through the same API server — ours created by the VMI controller, KubeVirt's
 * created with `dryRun=All` — so every default the server (and its admission plugins) adds is on
 * both sides; what the normalisation below removes is only what differs by nature between two
 * pods of the same VMI.
 */
import type { V1Pod, V1PodAffinityTerm } from '@kubernetes/client-node';

/** One differing field: its path, our value and KubeVirt's (undefined = absent on that side). */
export interface Difference {
  readonly path: string;
  readonly ours: unknown;
  readonly kubevirt: unknown;
}

/** The launcher's `--qemu-timeout`: 240 s + a jitter of 0–119 s (KubeVirt: random; ours: from the UID). */
const QEMU_TIMEOUT_MIN = 240;
const QEMU_TIMEOUT_MAX = 359;
export const QEMU_TIMEOUT_PLACEHOLDER = `<${QEMU_TIMEOUT_MIN}..${QEMU_TIMEOUT_MAX}>s`;
/** The service-account token volume's name once its random suffix is dropped. */
export const TOKEN_VOLUME = 'kube-api-access-<random>';

/**
 * Replaces every occurrence of the `from` UIDs in KubeVirt's pod with the sandbox's: the oracle
 * rendered for a VMI (and PVCs) whose UIDs the API server had not assigned yet, and a UID is in
 * the owner reference, the `created-by` label, the launcher's `--uid`, paths and
 * persistent-reservation labels.
 */
export function substituteUids(pod: V1Pod, uids: ReadonlyMap<string, string>): V1Pod {
  let text = JSON.stringify(pod);
  for (const [from, to] of uids) text = text.split(from).join(to);
  return JSON.parse(text) as V1Pod;
}

/**
 * The normalisation, applied to both pods alike; each rule says why:
 * - `metadata.name` (generated from `generateName` by the server: random on both sides), `uid`,
 *   `resourceVersion`, `creationTimestamp`, `generation`, `managedFields`: the server's bookkeeping
 *   of one particular object; the dry-run copy has its own.
 * - `spec.nodeName`: the scheduler's binding of our pod after creation; KubeVirt's dry-run copy
 *   is never scheduled.
 * - `status`: the node side's (kubelet, scheduler conditions), not the controller's.
 * - the name of the service-account token volume (`kube-api-access-<random>`) the API server's
 *   ServiceAccount admission adds, with its mounts, when the pod automounts a token: the suffix is
 *   random per pod.
 * - the order of the persistent-reservation anti-affinity terms (`pr.kubevirt.io/<claim UID>`):
 *   KubeVirt appends them in Go map order, which changes from one render to the next; sorted.
 * - the compute container's `--qemu-timeout` value: KubeVirt draws it at random (the oracle's
 *   `--seed` fixes it), ours derives it from the VMI UID; both must lie in 240–359 s, and a value
 *   outside that range is left in place so that it shows as a difference.
 */
export function normalisePod(pod: V1Pod): V1Pod {
  const p = structuredClone(pod);
  if (p.metadata) {
    for (const k of ['name', 'uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink'] as const) delete p.metadata[k];
  }
  if (p.spec) delete p.spec.nodeName;
  delete p.status;
  const anti = p.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (anti) sortReservationTerms(anti);
  const token = (name: string) => (/^kube-api-access-[a-z0-9]{5}$/.test(name) ? TOKEN_VOLUME : name);
  for (const v of p.spec?.volumes ?? []) v.name = token(v.name);
  for (const c of [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])]) {
    for (const m of c.volumeMounts ?? []) m.name = token(m.name);
    const args = c.args;
    if (!args) continue;
    const i = args.indexOf('--qemu-timeout');
    const value = i >= 0 ? args[i + 1] : undefined;
    const m = value ? /^(\d+)s$/.exec(value) : null;
    if (m && Number(m[1]) >= QEMU_TIMEOUT_MIN && Number(m[1]) <= QEMU_TIMEOUT_MAX) args[i + 1] = QEMU_TIMEOUT_PLACEHOLDER;
  }
  return p;
}

/** The key of a persistent-reservation anti-affinity term, else undefined. */
function reservationKey(term: V1PodAffinityTerm): string | undefined {
  const exprs = term.labelSelector?.matchExpressions ?? [];
  const key = exprs.length === 1 ? exprs[0]?.key : undefined;
  return key?.startsWith('pr.kubevirt.io/') ? key : undefined;
}

/** Sorts, in place, the run of persistent-reservation terms at the end of `terms` by label key. */
export function sortReservationTerms(terms: V1PodAffinityTerm[]): void {
  let start = terms.length;
  while (start > 0 && reservationKey(terms[start - 1]!) !== undefined) start--;
  const tail = terms.splice(start).sort((a, b) => reservationKey(a)!.localeCompare(reservationKey(b)!));
  terms.push(...tail);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The field an array of objects is keyed by, when every element has a distinct string value for
 * it: containers, volumes, env and ports by `name`, mounts by `mountPath`, devices by
 * `devicePath`. Keyed arrays are compared element by element whatever their order, and their
 * order is compared on its own, so one inserted volume shows as one difference, not as every
 * later volume shifted.
 */
function arrayKey(a: readonly unknown[], b: readonly unknown[]): string | undefined {
  for (const key of ['name', 'mountPath', 'devicePath', 'conditionType']) {
    const distinct = (xs: readonly unknown[]) => {
      const vals = xs.map((x) => (isObject(x) ? x[key] : undefined));
      return vals.every((v) => typeof v === 'string') && new Set(vals).size === vals.length;
    };
    if (a.length + b.length > 0 && distinct(a) && distinct(b)) return key;
  }
  return undefined;
}

/** Every differing leaf (or whole sub-tree present on one side only) between `ours` and `kubevirt`. */
export function diffValues(ours: unknown, kubevirt: unknown, path = ''): Difference[] {
  if (Array.isArray(ours) && Array.isArray(kubevirt)) return diffArrays(ours, kubevirt, path);
  if (isObject(ours) && isObject(kubevirt)) {
    const out: Difference[] = [];
    const keys = [...new Set([...Object.keys(ours), ...Object.keys(kubevirt)])].sort();
    for (const k of keys) out.push(...diffValues(ours[k], kubevirt[k], path ? `${path}.${k}` : k));
    return out;
  }
  return JSON.stringify(ours) === JSON.stringify(kubevirt) ? [] : [{ path, ours, kubevirt }];
}

function diffArrays(ours: readonly unknown[], kubevirt: readonly unknown[], path: string): Difference[] {
  const key = arrayKey(ours, kubevirt);
  if (!key) {
    const out: Difference[] = [];
    for (let i = 0; i < Math.max(ours.length, kubevirt.length); i++) out.push(...diffValues(ours[i], kubevirt[i], `${path}[${i}]`));
    return out;
  }
  const keyOf = (x: unknown) => (x as Record<string, string>)[key]!;
  const theirs = new Map(kubevirt.map((x) => [keyOf(x), x]));
  const mine = new Map(ours.map((x) => [keyOf(x), x]));
  const out: Difference[] = [];
  for (const k of [...new Set([...mine.keys(), ...theirs.keys()])]) out.push(...diffValues(mine.get(k), theirs.get(k), `${path}[${k}]`));
  const common = (xs: Map<string, unknown>, other: Map<string, unknown>) => [...xs.keys()].filter((k) => other.has(k));
  const a = common(mine, theirs);
  const b = common(theirs, mine);
  if (a.join('\0') !== b.join('\0')) out.push({ path: `${path}(order)`, ours: a, kubevirt: b });
  return out;
}

/** Our pod against KubeVirt's, both normalised. */
export function diffPods(ours: V1Pod, kubevirt: V1Pod): Difference[] {
  return diffValues(normalisePod(ours), normalisePod(kubevirt));
}

/** One line per difference: `path: ours … vs KubeVirt's …` (long values cut). */
export function formatDifferences(diffs: readonly Difference[], max = 40): string {
  const show = (v: unknown) => {
    if (v === undefined) return '(absent)';
    const s = JSON.stringify(v);
    return s.length > 200 ? `${s.slice(0, 197)}...` : s;
  };
  const lines = diffs.slice(0, max).map((d) => `  ${d.path}: ours ${show(d.ours)} vs KubeVirt's ${show(d.kubevirt)}`);
  if (diffs.length > max) lines.push(`  … and ${diffs.length - max} more`);
  return lines.join('\n');
}
