/**
 * Normalisation of what a scenario leaves, so that KubeVirt's run and ours compare field by
 * field (docs/fidelity.md, "The live lane", lists each rule and why):
 *
 * - **UIDs**: every UUID anywhere, in values and in keys (metadata.uid, `status.activePods`, ownerReferences, `kubevirt.io/created-by`
 *   labels, annotations, status fields) becomes `<uid:Kind/name>` of the object that has it,
 *   names normalised as below, or `<uid>` for a UID of no collected object.
 * - **Generated names**: a name made from `generateName` (5 random characters) becomes
 *   `<generateName>#<n>`, n counting those objects in creation order; every string in which the
 *   name appears gets the same replacement. The `kube-api-access-<5>` token volume is
 *   `kube-api-access-<random>` (ServiceAccount admission).
 * - **Times**: every RFC 3339 timestamp becomes `<time>` (creation, transition, probe,
 *   migration times…), and `resourceVersion`, `managedFields` and `generation`-free bookkeeping
 *   (`resourceVersion` anywhere, `metadata.managedFields`, `metadata.selfLink`) are dropped.
 * - **Per-run secrets**: PEM blocks (the export CA a sandbox makes at start, certificates signed by
 *   it) become `<pem>`, and the exporter's certificate Secret `secret-<10 random>` becomes
 *   `secret-<random>`; Go-formatted times (`2026-12-06 09:50:36 +0000 UTC`) are times too.
 * - **The launcher's `--qemu-timeout`**: KubeVirt adds a random 0–119 s, ours derives it from the
 *   UID (as in pod-diff.ts).
 * - **What the simulated node side invents per run**: container IDs, the guest
 *   interface's MAC (`containerID`, `mac`) become `<container-id>`, `<mac>`.
 * - **IPs**: pod and VMI IP addresses (`podIP(s)`, `ipAddress(es)`, `hostIP(s)`, `migration` endpoints)
 *   become `<ip>`: the sandbox's kubelet hands them out in order of pod creation.
 *
 * - **Node names**: `node01`/`node02` where a node is named (`nodeName`, the `kubevirt.io/nodeName`
 *   label, `activePods`, migration source/target nodes) become `<node>`: the sandbox's scheduler
 *   breaks ties between its nodes by timing, so which node a pod lands on is not the controller's.
 * - **null is absent**: a field whose value is null is dropped (Go decodes null and absent to the
 *   same zero value, and writes a zero `metav1.Time` as null; the real API server keeps what each
 *   writer sent).
 * - **Condition order**: `conditions` lists are compared sorted by type (their order is the order
 *   in which they were first written).
 * - **A VMI's `metadata.generation`**: the VMI kind has no status subresource, so its generation
 *   counts every status write; the number of writes is not compared.
 * - Generated names made in the same second are ordered by role (a migration's target pod
 *   after its source) before their random suffix.
 *
 * Nothing else: `metadata.generation` of other kinds, labels, annotations, conditions (with reasons and
 * messages), owner references and every spec and status field stay.
 */
import { isDeepStrictEqual } from 'node:util';

/** One collected object (any kind). */
export interface LiveObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { name?: string; generateName?: string; namespace?: string; uid?: string; creationTimestamp?: string; [k: string]: unknown };
  readonly [k: string]: unknown;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** Go's `time.Time.String()` (KubeVirt's `kubevirt.io/migration-target-ready-timestamp`). */
const GO_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? [+-]\d{4} [A-Z]+$/;
const PEM = /^-----BEGIN [A-Z ]+-----\n[\s\S]*-----END [A-Z ]+-----\n?$/;
/** A random name an export controller gives the exporter's certificate Secret (10 characters). */
const EXPORT_SECRET = /^secret-[a-z0-9]{10}$/;
const IP = /^(\d{1,3}\.){3}\d{1,3}$|^[0-9a-f:]+:[0-9a-f:]*$/i;
const TOKEN_VOLUME = /kube-api-access-[a-z0-9]{5}/g;
const QEMU_TIMEOUT = /^(2[4-9]\d|3[0-5]\d)s$/;
const DROP = new Set(['resourceVersion', 'managedFields', 'selfLink']);
const IP_KEYS = new Set(['podIP', 'hostIP', 'ipAddress', 'ip', 'targetNodeAddress', 'nodeAddress']);
/** Where a node's name stands: the sandbox's scheduler breaks ties between its two nodes by timing. */
const NODE_KEYS = new Set(['nodeName', 'kubevirt.io/nodeName', 'node', 'targetNode', 'sourceNode', 'evacuationNodeName', 'kubevirt.io/evacuationMigration', 'kubevirt.io/migrationTargetNodeName', 'volume.kubernetes.io/selected-node']);
const NODE_NAME = /^node\d\d$/;
/** Values the simulated node side invents per run (container IDs, a guest's MAC). */
const NODE_RANDOM_KEYS: Record<string, string> = { containerID: '<container-id>', mac: '<mac>' };

/** The replacements of one side's objects: generated names and UIDs. */
export interface Renames {
  readonly names: ReadonlyMap<string, string>;
  readonly uids: ReadonlyMap<string, string>;
}

/**
 * Which of two objects made from the same `generateName` in the same second came first: a
 * migration's target pod (labelled with the migration) after the pod it migrates from. The API
 * server's timestamps have whole seconds, and the random suffixes order nothing.
 */
function laterBorn(o: LiveObject): number {
  const labels = (o.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
  return labels['kubevirt.io/migrationJobUID'] !== undefined ? 1 : 0;
}

/** Generated names (in creation order per generateName) and UIDs of `objects`. */
export function renamesOf(objects: readonly LiveObject[]): Renames {
  const names = new Map<string, string>();
  const counts = new Map<string, number>();
  const generated = objects
    .filter((o) => o.metadata?.generateName && o.metadata.name?.startsWith(o.metadata.generateName) && o.metadata.name.length === o.metadata.generateName.length + 5)
    .sort((a, b) => String(a.metadata!.creationTimestamp ?? '').localeCompare(String(b.metadata!.creationTimestamp ?? '')) || laterBorn(a) - laterBorn(b) || a.metadata!.name!.localeCompare(b.metadata!.name!));
  for (const o of generated) {
    const g = o.metadata!.generateName!;
    const n = (counts.get(g) ?? 0) + 1;
    counts.set(g, n);
    names.set(o.metadata!.name!, `${g}#${n}`);
  }
  // Names may hold another object's UID (`restore-<uid>-data`, `vmsnapshot-content-<uid>`): a
  // first map with the names as they are normalises those names, the second uses them.
  const rawUids = new Map<string, string>();
  for (const o of objects) if (o.metadata?.uid) rawUids.set(o.metadata.uid, `<uid:${o.kind}/${names.get(o.metadata.name!) ?? o.metadata.name}>`);
  const uids = new Map<string, string>();
  for (const o of objects) {
    const uid = o.metadata?.uid;
    if (!uid) continue;
    const name = names.get(o.metadata!.name!) ?? o.metadata!.name!;
    const shown = name.replace(UUID, (u) => (u === uid ? '<self>' : rawUids.get(u) ?? '<uid>'));
    if (shown !== name && !names.has(o.metadata!.name!)) names.set(o.metadata!.name!, shown);
    uids.set(uid, `<uid:${o.kind}/${shown}>`);
  }
  return { names, uids };
}

/** One string with `r`'s replacements (and the rules above for its `key`). */
export function normaliseString(s: string, r: Renames, key: string | undefined): string {
  if (TIME.test(s) || GO_TIME.test(s)) return '<time>';
  if (PEM.test(s)) return '<pem>';
  if (key === 'secretName' && EXPORT_SECRET.test(s)) return 'secret-<random>';
  if (key !== undefined && IP_KEYS.has(key) && IP.test(s)) return '<ip>';
  if (key !== undefined && NODE_KEYS.has(key) && NODE_NAME.test(s)) return '<node>';
  let out = s.replace(UUID, (u) => r.uids.get(u) ?? '<uid>').replace(TOKEN_VOLUME, 'kube-api-access-<random>');
  // Longest first: a generated name may contain another's prefix.
  for (const [from, to] of [...r.names].sort((a, b) => b[0].length - a[0].length)) if (out.includes(from)) out = out.split(from).join(to);
  return out;
}

function normaliseValue(v: unknown, r: Renames, key: string | undefined, parentKey: string | undefined): unknown {
  if (typeof v === 'string') return normaliseString(v, r, key);
  if (Array.isArray(v)) {
    const items = v.map((x) => normaliseValue(x, r, key, parentKey));
    // A launcher's arguments: `--qemu-timeout` is followed by its random value.
    if (key === 'args' || key === 'command') for (let i = 1; i < items.length; i++) if (items[i - 1] === '--qemu-timeout' && typeof items[i] === 'string' && QEMU_TIMEOUT.test(items[i] as string)) items[i] = '<qemu-timeout>';
    if ((key === 'podIPs' || key === 'hostIPs' || key === 'ipAddresses') && items.every((x) => typeof x === 'string')) return items.map(() => '<ip>');
    // Conditions by type: their order is the order they were first written in.
    if (key === 'conditions') return [...items].sort((a, b) => String((a as { type?: string }).type).localeCompare(String((b as { type?: string }).type)));
    return items;
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // null is absent: Go decodes both to the zero value (and writes a zero metav1.Time as null).
      if (DROP.has(k) || x === null) continue;
      if (typeof x === 'string' && NODE_RANDOM_KEYS[k]) {
        out[k] = NODE_RANDOM_KEYS[k];
        continue;
      }
      // Keys may be UIDs too (a VMI's `status.activePods` maps pod UIDs to nodes).
      out[normaliseString(k, r, undefined)] = normaliseValue(x, r, k, key);
    }
    return out;
  }
  return v;
}

/** `o` normalised with its side's renames. */
export function normaliseObject(o: LiveObject, r: Renames): LiveObject {
  const out = normaliseValue(o, r, undefined, undefined) as LiveObject & { metadata?: Record<string, unknown>; status?: { activePods?: Record<string, unknown> } };
  // A VMI has no status subresource: its generation counts every status write, not spec changes.
  if (o.kind === 'VirtualMachineInstance' && out.metadata) delete out.metadata.generation;
  // activePods maps pod UIDs to node names.
  const active = out.status?.activePods;
  if (active) for (const k of Object.keys(active)) if (typeof active[k] === 'string' && NODE_NAME.test(active[k] as string)) active[k] = '<node>';
  return out;
}

/** `Kind/name` of a normalised object: what the two sides' objects are matched by. */
export function keyOf(o: LiveObject): string {
  return `${o.kind}/${o.metadata?.name}`;
}

/** Both sides' objects, normalised, by {@link keyOf}. */
export function normaliseAll(objects: readonly LiveObject[]): Map<string, LiveObject> {
  const r = renamesOf(objects);
  const out = new Map<string, LiveObject>();
  for (const o of objects) {
    const n = normaliseObject(o, r);
    out.set(keyOf(n), n);
  }
  return out;
}

/** True when the two normalised values are equal. */
export function same(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}
