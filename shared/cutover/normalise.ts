/**
 * What shadow mode does not count as a divergence (docs/cutover.md, "Normalisations"): values
 * that differ between two correct controllers by construction. Each rule is one entry of
 * {@link NORMALISATIONS}, applied to both sides before they are compared.
 */

/** The rules, as the runbook lists them. */
export const NORMALISATIONS = [
  { id: 'times', what: 'RFC 3339 timestamps, and fields named *Timestamp / *Time (probe, transition, creation times): when a controller acted, not what it decided' },
  { id: 'random-suffixes', what: 'the 5-character random suffix the API server appends to a generateName (pods, VMIs of a replica set, the kube-api-access-xxxxx volume): replaced by <rand>' },
  { id: 'uids', what: 'UIDs as values and as map keys (a VMI\'s status.activePods is keyed by its pod\'s UID): replaced by <uid>' },
  { id: 'server-fields', what: 'metadata.resourceVersion, uid, generation, managedFields, selfLink: the API server\'s bookkeeping' },
  { id: 'own-annotations', what: 'annotations under virt-reconciler.io/: ours, and no virt-controller writes them' },
  { id: 'qemu-timeout', what: "the launcher's `--qemu-timeout` argument: 240 s plus a jitter KubeVirt draws at random per pod (ours is derived from the VMI), so two controllers never agree on it" },
  { id: 'quantities', what: 'a quantity written in another unit is the same amount (295168Ki = 302252032, 0Mi = 0, 1000m = 1)' },
  { id: 'empty', what: 'an empty list or map, false, 0, "" and an absent field are the same (Go\'s omitempty on the wire): a finalizers list written as [] reads back as absent, KubeVirt omits readyReplicas: 0, disableTLS: false and a condition\'s empty reason; a label\'s or annotation\'s "" is a value' },
  { id: 'stale-reads', what: 'after a dry run answered Conflict or AlreadyExists (the live controller wrote the object after our read), the rest of that reconcile is not judged: it decided from a stale view, and for real it would have retried' },
  { id: 'superseded', what: 'a decision followed, before it is judged, by a later decision of ours on the same object and fields is judged by the later one — or, for an update or patch the live object never showed, by a later reconcile of the key that ran its course without writing it again (it found the object as it would leave it): intermediate statuses computed from inputs seen at another instant than the live controller saw them (one of two VMIs ready, a migration target not yet running)' },
  { id: 'condition-order', what: 'lists of conditions (objects with a type) are compared in type order: KubeVirt and we append them in different orders' },
  { id: 'events', what: 'Events are recorded and counted, never compared: recorders aggregate and rate-limit them differently' },
] as const;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// k8s.io/apimachinery's utilrand alphabet (no vowels, no look-alikes), 5 characters after a dash.
const RANDOM_SUFFIX = /-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
const SERVER_FIELDS = new Set(['resourceVersion', 'uid', 'generation', 'managedFields', 'selfLink', 'creationTimestamp', 'deletionTimestamp']);
const OWN_ANNOTATION = 'virt-reconciler.io/';

const QUANTITY = /^([+-]?\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)$/;
const SUFFIX: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

function normaliseString(s: string): string {
  if (RFC3339.test(s)) return '<time>';
  if (UUID.test(s)) return '<uid>';
  const q = QUANTITY.exec(s);
  if (q) return String(Number(q[1]) * SUFFIX[q[2]!]!);
  return s.replace(RANDOM_SUFFIX, '-<rand>');
}

function isTimeField(key: string): boolean {
  return /(Timestamp|Time)$/.test(key) && key !== 'terminationGracePeriodSeconds';
}

/** The value with every rule applied (a new value; `parentKey` is the key it sits under). */
export function normalise(value: unknown, parentKey = ''): unknown {
  if (typeof value === 'string') return normaliseString(value);
  if (value instanceof Date) return '<time>';
  if (Array.isArray(value)) {
    const out = value.map((v, i) => (value[i - 1] === '--qemu-timeout' ? '<jitter>' : normalise(v)));
    // Conditions are keyed by type: their order is not a decision.
    const typed = out.length > 1 && out.every((c) => typeof c === 'object' && c !== null && typeof (c as { type?: unknown }).type === 'string');
    return typed ? out.sort((a, b) => String((a as { type: string }).type).localeCompare(String((b as { type: string }).type))) : out;
  }
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (SERVER_FIELDS.has(k) || isTimeField(k)) continue;
    if (parentKey === 'annotations' && k.startsWith(OWN_ANNOTATION)) continue;
    out[normaliseString(k)] = normalise(v, k);
  }
  return out;
}

/** Deep equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
