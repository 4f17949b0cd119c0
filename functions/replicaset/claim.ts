/**
 * Which VMIs of the namespace belong to the replica set (reference-replicas-pools-clones.md §0
 * claiming): owned and matching → claimed; owned and no longer matching → released (unless the
 * replica set is being deleted); unowned and matching → adopted (unless either is being deleted);
 * controlled by another owner → ignored.
 */
import type { LabelSelector, VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { selectorMatches } from '../../shared/predicates/label-selector.ts';
import { controllerOf } from '../../shared/predicates/owner-refs.ts';
import { isVmiDeleting } from '../../shared/predicates/vmis.ts';

export interface Claims {
  /** Already ours and matching. */
  readonly claimed: VirtualMachineInstance[];
  /** Orphans to adopt (claimed once the patch succeeds). */
  readonly adopt: VirtualMachineInstance[];
  /** Ours but no longer matching. */
  readonly release: VirtualMachineInstance[];
}

export function classifyVmis(rs: VirtualMachineInstanceReplicaSet, selector: LabelSelector, vmis: readonly VirtualMachineInstance[]): Claims {
  const uid = rs.metadata?.uid;
  const rsDeleting = rs.metadata?.deletionTimestamp !== undefined && rs.metadata.deletionTimestamp !== null;
  const out: Claims = { claimed: [], adopt: [], release: [] };
  for (const vmi of vmis) {
    const ref = controllerOf(vmi);
    const matches = selectorMatches(selector, vmi.metadata?.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches) out.claimed.push(vmi);
      else if (!rsDeleting) out.release.push(vmi);
    } else if (matches && !rsDeleting && !isVmiDeleting(vmi)) {
      out.adopt.push(vmi);
    }
  }
  return out;
}
