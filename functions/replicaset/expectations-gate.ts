/**
 * The replica set's expectations (reference-replicas-pools-clones.md §0, §1.2 step 4) on the
 * shared gate (shared/reconcile/expectations-gate.ts). KubeVirt lowers them from informer events;
 * a stateless function lowers them from a read. The replica set lists its VMIs with a quorum
 * read, so a read shows every write that has returned; what it cannot show is a write still in
 * flight in a worker that is presumed dead.
 *
 * - Creations: VMIs are created with generateName, so a creation is recognised by the name the
 *   create returned. The burst records those names (RS_CREATED) once all its creates have
 *   returned; a record of names at least as recent as the creation expectation settles it.
 *   Without one, the burst's worker died mid-way and its creates may still land: wait.
 * - Deletions, by `namespace/name`: observed when the VMI is gone or has a deletionTimestamp.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { isVmiDeleting } from '../../shared/predicates/vmis.ts';
import { expectationsGate as gate, type GateResult } from '../../shared/reconcile/expectations-gate.ts';
import { isExpectationSatisfied } from '../../shared/state/port.ts';
import { RS_CREATED, RS_EXPECTATIONS, type RsDeps } from './deps.ts';
import { vmiKey } from './scale.ts';

/** Lowers what the quorum-read `vmis` (every VMI of the namespace) show. */
export function expectationsGate(key: string, vmis: readonly VirtualMachineInstance[], deps: RsDeps): Promise<GateResult<readonly VirtualMachineInstance[]>> {
  const e = deps.expectations;
  return gate(
    {
      key,
      scopes: [RS_EXPECTATIONS],
      what: 'replica set',
      lower: async (seen, [r]) => {
        if (r === undefined || isExpectationSatisfied(r, deps.now())) return true;
        const created = r.add > 0 ? await e.get(RS_CREATED, key) : undefined;
        const creationsSeen = r.add <= 0 || (created !== undefined && created.setAt >= r.setAt);
        const present = new Map(seen.map((v) => [vmiKey(v), v]));
        const deletionsSeen = r.del <= 0 || r.deleteKeys.every((k) => {
          const v = present.get(k);
          return v === undefined || isVmiDeleting(v);
        });
        if (!creationsSeen || !deletionsSeen) return false;
        // All seen: drop the record (and the names), as nothing is left to observe. (A names
        // record left by a takeover is harmless: older than any later creation record, it settles none.)
        await e.delete(RS_EXPECTATIONS, key);
        if (created) await e.delete(RS_CREATED, key);
        return true;
      },
    },
    vmis,
    deps,
  );
}
