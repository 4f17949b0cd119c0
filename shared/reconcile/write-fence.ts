/**
 * Read-your-writes for views (shared/relay/view.ts). A message's view is computed when the relay
 * sends the key; the key's previous pass may have written since (a pod status patch, a VMI status
 * update) and its events may not have reached the relay yet. A pass that trusted such a view
 * would redo that write (or have it refused with a 409). So each pass of a controller whose
 * messages carry views records what it wrote — object → the resourceVersion the API server gave
 * it — and the next pass takes a view object only when it is at least that new.
 *
 * Kept in the expectations table under its own scope (one record per controller key; the set of
 * `object@resourceVersion` entries in the record's key set), so it needs no table of its own and
 * expires with the expectations (5 minutes: a fence older than that has long been overtaken by
 * the watches).
 */
import type { ApiWrite } from '../kube/api-write.ts';
import type { Expectations } from '../state/port.ts';

/** The expectations scope of the fences. */
export const WRITE_FENCE_SCOPE = 'write-fences';

/** Object id (`plural/namespace/name`) → the resourceVersion a pass of the key last wrote. */
export type WriteFence = ReadonlyMap<string, string>;

/** The id of an object in a fence. */
export function fenceId(plural: string, namespace: string | undefined, name: string): string {
  return `${plural}/${namespace ?? ''}/${name}`;
}

/** The fence of `key` (empty when none). */
export async function readFence(expectations: Pick<Expectations, 'get'>, key: string): Promise<WriteFence> {
  const record = await expectations.get(WRITE_FENCE_SCOPE, key);
  const out = new Map<string, string>();
  for (const entry of record?.deleteKeys ?? []) {
    const at = entry.lastIndexOf('@');
    if (at > 0) out.set(entry.slice(0, at), entry.slice(at + 1));
  }
  return out;
}

/**
 * Adds what a pass wrote (successful creates, updates and patches) to the fence `before` it read,
 * and stores it; no write when the pass wrote nothing.
 */
export async function recordFence(expectations: Pick<Expectations, 'expectDeletions'>, key: string, before: WriteFence, writes: readonly ApiWrite[], now: number): Promise<void> {
  const next = new Map(before);
  let changed = false;
  for (const w of writes) {
    if (w.resourceVersion === undefined) continue;
    next.set(fenceId(w.resource.replace(/\/status$/, ''), w.namespace, w.name), w.resourceVersion);
    changed = true;
  }
  if (!changed) return;
  await expectations.expectDeletions(WRITE_FENCE_SCOPE, key, [...next].map(([id, rv]) => `${id}@${rv}`), now);
}

/** True when a view object of resourceVersion `rv` is older than what the fence says was written. */
export function isBehindFence(fence: WriteFence, id: string, rv: string | undefined): boolean {
  const written = fence.get(id);
  if (written === undefined) return false;
  // resourceVersions are opaque to clients; an API server backed by etcd gives decimal revisions,
  // and anything that does not compare as one is treated as behind (the read goes to the server).
  if (rv === undefined || !/^\d+$/.test(rv) || !/^\d+$/.test(written)) return true;
  return BigInt(rv) < BigInt(written);
}
