/**
 * How many VMIs to create or which to delete (reference-replicas-pools-clones.md §1.2 Scale and
 * Clean): the difference between the active count and `spec.replicas`, at most BurstReplicas per
 * pass. Deletion candidates are the first ones in list order: KubeVirt prescribes no policy (Q-R2).
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';

export type ScaleDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'create'; readonly count: number }
  | { readonly kind: 'delete'; readonly vmis: readonly VirtualMachineInstance[] };

export function decideScale(active: readonly VirtualMachineInstance[], replicas: number, burst: number): ScaleDecision {
  const diff = active.length - replicas;
  if (diff === 0) return { kind: 'none' };
  const n = Math.min(Math.abs(diff), burst);
  return diff < 0 ? { kind: 'create', count: n } : { kind: 'delete', vmis: active.slice(0, n) };
}

/** The finished and unknown VMIs this pass deletes: the first BurstReplicas of them. */
export function decideClean(toClean: readonly VirtualMachineInstance[], burst: number): readonly VirtualMachineInstance[] {
  return toClean.slice(0, burst);
}

/** `namespace/name`: how expectations name a VMI (KubeVirt's object key). */
export function vmiKey(vmi: VirtualMachineInstance): string {
  return `${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`;
}
