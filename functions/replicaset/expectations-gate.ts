/**
 * The replica set's expectations (reference-replicas-pools-clones.md §0, §1.2 step 4), in the
 * table. KubeVirt lowers them from informer events; a stateless function lowers them from a read.
 * The replica set lists its VMIs with a quorum read, so a read shows every write that has
 * returned; what it cannot show is a write still in flight in a worker that is presumed dead.
 *
 * - Creations: VMIs are created with generateName, so a creation is recognised by the name the
 *   create returned. The burst records those names (RS_CREATED) once all its creates have
 *   returned; a record of names at least as recent as the creation expectation settles it.
 *   Without one, the burst's worker died mid-way and its creates may still land: wait.
 * - Deletions, by `namespace/name`: observed when the VMI is gone or has a deletionTimestamp.
 *
 * What a read cannot settle is taken over after `takeoverMs` (per-key serialization: the worker
 * that wrote the record has been gone at least a visibility timeout by then).
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { isVmiDeleting } from '../../shared/predicates/vmis.ts';
import { EXPECTATIONS_TIMEOUT_MS, isExpectationSatisfied } from '../../shared/state/port.ts';
import { RS_CREATED, RS_EXPECTATIONS, type RsDeps } from './deps.ts';
import { vmiKey } from './scale.ts';

export type Gate = { readonly kind: 'satisfied' } | { readonly kind: 'wait'; readonly seconds: number };

/** Lowers what the quorum-read `vmis` (every VMI of the namespace) show; satisfied or how long to wait. */
export async function expectationsGate(key: string, vmis: readonly VirtualMachineInstance[], deps: RsDeps): Promise<Gate> {
  const e = deps.expectations;
  const now = deps.now();
  const record = await e.get(RS_EXPECTATIONS, key);
  if (isExpectationSatisfied(record, now)) return { kind: 'satisfied' };
  const r = record!;

  const created = r.add > 0 ? await e.get(RS_CREATED, key) : undefined;
  const creationsSeen = r.add <= 0 || (created !== undefined && created.setAt >= r.setAt);
  const present = new Map(vmis.map((v) => [vmiKey(v), v]));
  const deletionsSeen = r.del <= 0 || r.deleteKeys.every((k) => {
    const v = present.get(k);
    return v === undefined || isVmiDeleting(v);
  });
  if (creationsSeen && deletionsSeen) {
    // All seen: drop the record (and the names), as nothing is left to observe.
    await e.delete(RS_EXPECTATIONS, key);
    if (created) await e.delete(RS_CREATED, key);
    return { kind: 'satisfied' };
  }

  const takeoverMs = deps.takeoverMs ?? EXPECTATIONS_TIMEOUT_MS;
  if (now - r.setAt >= takeoverMs) {
    deps.log.warn('taking over a replica set expectation a read cannot settle', { key, setAt: r.setAt, add: r.add, del: r.del });
    await e.delete(RS_EXPECTATIONS, key);
    await e.delete(RS_CREATED, key);
    return { kind: 'satisfied' };
  }
  const waitMs = (r.setAt + takeoverMs - now) / (deps.clockSpeed ?? 1);
  return { kind: 'wait', seconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}
