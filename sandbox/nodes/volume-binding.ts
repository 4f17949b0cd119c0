/**
 * The scheduler's volume-binding step, as kube-scheduler's VolumeBinding plugin decides it, as a
 * pure function: a pod whose PersistentVolumeClaims are not all bound is not bound to a node.
 *
 * - a claim that does not exist: unschedulable (`persistentvolumeclaim "x" not found`);
 * - an unbound claim (no `spec.volumeName`) of an Immediate StorageClass (or none): unschedulable
 *   (`pod has unbound immediate PersistentVolumeClaims`) until the PV controller binds it;
 * - an unbound claim of a WaitForFirstConsumer class: the scheduler picks the node and writes it
 *   on the claim (`volume.kubernetes.io/selected-node`) for the provisioner, and binds the pod only
 *   once the claim is bound; a claim that already names a node pins the pod to it.
 *
 * Found by the real lane: our scheduler used to place such pods at once, kube-scheduler did not.
 */
import { claimsOf } from '../storage/objects.ts';

/** The annotation kube-scheduler sets on a WaitForFirstConsumer claim for its provisioner. */
export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';

/** The parts of a claim the decision reads. */
export interface ClaimView {
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec?: { volumeName?: string; storageClassName?: string };
}

/** The binding mode of a StorageClass, by name (`undefined` class name: the default class, if any). */
export type BindingModeOf = (storageClassName: string | undefined) => 'Immediate' | 'WaitForFirstConsumer';

/** What the scheduler does with a pod's claims. */
export type VolumeDecision =
  /** Every claim bound (or none): schedule as usual; `node` when a claim pins the pod to one. */
  | { readonly kind: 'ready'; readonly node?: string }
  /** Not schedulable yet, with kube-scheduler's reason. */
  | { readonly kind: 'unschedulable'; readonly message: string }
  /** WaitForFirstConsumer claims to be given a node (`pinned`: one of them already names it). */
  | { readonly kind: 'select-node'; readonly claims: readonly string[]; readonly pinned?: string };

/** Decides from the pod's claims; `claimOf` answers undefined for a claim that does not exist. */
export function volumeDecision(pod: Parameters<typeof claimsOf>[0], claimOf: (name: string) => ClaimView | undefined, modeOf: BindingModeOf): VolumeDecision {
  const waiting: string[] = [];
  let pinned: string | undefined;
  for (const name of claimsOf(pod)) {
    const claim = claimOf(name);
    if (!claim) return { kind: 'unschedulable', message: `persistentvolumeclaim "${name}" not found` };
    // A volume provisioned for a selected node lives there (its PV's node affinity).
    const selected = claim.metadata?.annotations?.[SELECTED_NODE_ANNOTATION];
    if (selected) pinned = selected;
    if (claim.spec?.volumeName) continue;
    if (modeOf(claim.spec?.storageClassName) !== 'WaitForFirstConsumer') return { kind: 'unschedulable', message: 'pod has unbound immediate PersistentVolumeClaims' };
    if (!selected) waiting.push(name);
  }
  if (waiting.length > 0) return { kind: 'select-node', claims: waiting, ...(pinned ? { pinned } : {}) };
  // Claims that name a node but are not bound yet: wait for the provisioner (nothing to write).
  if (claimsOf(pod).some((n) => !claimOf(n)?.spec?.volumeName)) return { kind: 'unschedulable', message: 'waiting for the volumes of the selected node to be provisioned' };
  return { kind: 'ready', ...(pinned ? { node: pinned } : {}) };
}

/**
 * kube-scheduler's wording for a pod its VolumeBinding pre-filter rejected, as v1.37 writes it on
 * the real lane (`0/4 nodes are available: persistentvolumeclaim "absent" not found. not found`:
 * the preemption post-filter's message is "not found" there; test/sandbox/nodes/strict-kubelet.test.ts).
 */
export function preFilterMessage(nodes: number, reason: string): string {
  return `0/${nodes} nodes are available: ${reason}. not found`;
}
