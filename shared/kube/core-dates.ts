/**
 * client-node deserialises core objects into models whose timestamps are `Date`s (docs/kube-client.md,
 * "client-node as it behaves on the wire"), and the {@link KubeClient} interface promises `V1Pod` / `V1PersistentVolumeClaim` in that
 * shape. The fetch-free client (http-client.ts) parses raw JSON, so it turns the same fields into
 * `Date`s here — the fields client-node 2.0.1's models type as `Date` for pods, PVCs, namespaces and nodes — and code
 * written against either implementation sees one shape.
 *
 * Unlike client-node, fields the model does not know are kept (a superset; nothing reads them).
 */

type Json = Record<string, unknown>;

function asObject(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

function asObjects(v: unknown): Json[] {
  return Array.isArray(v) ? v.map(asObject).filter((o): o is Json => o !== undefined) : [];
}

/** Strings become Dates; null/undefined stay as they are, as in client-node's ObjectSerializer. */
function revive(o: Json | undefined, ...fields: string[]): void {
  if (!o) return;
  for (const f of fields) {
    const v = o[f];
    if (typeof v === 'string') o[f] = new Date(v);
  }
}

function reviveMeta(metadata: unknown): void {
  const m = asObject(metadata);
  revive(m, 'creationTimestamp', 'deletionTimestamp');
  for (const entry of asObjects(m?.managedFields)) revive(entry, 'time');
}

function reviveConditions(conditions: unknown): void {
  for (const c of asObjects(conditions)) revive(c, 'lastProbeTime', 'lastTransitionTime');
}

function reviveContainerState(state: unknown): void {
  const s = asObject(state);
  revive(asObject(s?.running), 'startedAt');
  revive(asObject(s?.terminated), 'startedAt', 'finishedAt');
}

/** Converts a freshly parsed Pod's timestamp fields to `Date`s, in place; returns it. */
export function revivePodDates<T>(pod: T): T {
  const p = asObject(pod);
  reviveMeta(p?.metadata);
  const status = asObject(p?.status);
  revive(status, 'startTime');
  reviveConditions(status?.conditions);
  for (const list of ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses']) {
    for (const cs of asObjects(status?.[list])) {
      reviveContainerState(cs.state);
      reviveContainerState(cs.lastState);
    }
  }
  return pod;
}

/** Converts a freshly parsed PVC's timestamp fields to `Date`s, in place; returns it. */
export function revivePvcDates<T>(pvc: T): T {
  const p = asObject(pvc);
  reviveMeta(p?.metadata);
  reviveConditions(asObject(p?.status)?.conditions);
  return pvc;
}

/** Converts a freshly parsed Namespace's timestamp fields to `Date`s, in place; returns it. */
export function reviveNamespaceDates<T>(ns: T): T {
  const n = asObject(ns);
  reviveMeta(n?.metadata);
  for (const c of asObjects(asObject(n?.status)?.conditions)) revive(c, 'lastTransitionTime');
  return ns;
}

/** Converts a freshly parsed Node's timestamp fields to `Date`s, in place; returns it. */
export function reviveNodeDates<T>(node: T): T {
  const n = asObject(node);
  reviveMeta(n?.metadata);
  for (const c of asObjects(asObject(n?.status)?.conditions)) revive(c, 'lastHeartbeatTime', 'lastTransitionTime');
  return node;
}
