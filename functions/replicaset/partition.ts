/**
 * Which claimed VMIs count (reference-replicas-pools-clones.md §1.2 step 6, Q-R3): *active* ones
 * count toward replicas; *finished* (Succeeded/Failed) and *unknown* (their pod is terminating)
 * ones are to clean; deleting ones are neither, so replacements start at once.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { isVmiDeleting, isVmiFinal, isVmiUnknown } from '../../shared/predicates/vmis.ts';

export interface Partition {
  readonly active: VirtualMachineInstance[];
  /** Finished, then unknown: deleted after a successful scale. */
  readonly toClean: VirtualMachineInstance[];
}

export function partitionVmis(claimed: readonly VirtualMachineInstance[]): Partition {
  const active: VirtualMachineInstance[] = [];
  const finished: VirtualMachineInstance[] = [];
  const unknown: VirtualMachineInstance[] = [];
  for (const vmi of claimed) {
    if (isVmiDeleting(vmi)) continue;
    if (isVmiFinal(vmi)) finished.push(vmi);
    else if (isVmiUnknown(vmi)) unknown.push(vmi);
    else active.push(vmi);
  }
  return { active, toClean: [...finished, ...unknown] };
}
