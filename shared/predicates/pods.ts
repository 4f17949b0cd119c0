/**
 * Pure questions about launcher pods, as KubeVirt's controller asks them
 * (reference.md §a.2 `CurrentVMIPod`, §a.3 `IsPodReady`, pod down / going down).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import { COMPUTE_CONTAINER, EPHEMERAL_PROVISIONING_ANNOTATION, KIND_VMI } from '../api/well-known.ts';

/** True when `pod` has a controller reference to this VMI (by UID). */
export function isControlledBy(pod: V1Pod, vmi: VirtualMachineInstance): boolean {
  const uid = vmi.metadata?.uid;
  return (pod.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.kind === KIND_VMI && r.uid === uid);
}

/**
 * The pods `owner` controls (KubeVirt's `AttachmentPods`: a launcher pod's hotplug attachment
 * pods are the pods whose controller reference names it, by UID).
 */
export function podsControlledBy(pods: readonly V1Pod[], owner: V1Pod): V1Pod[] {
  const uid = owner.metadata?.uid;
  if (!uid) return [];
  return pods.filter((p) => (p.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid));
}

/** The WaitForFirstConsumer "doppelganger" pod, not a real launcher. */
export function isTempPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[EPHEMERAL_PROVISIONING_ANNOTATION] === 'true';
}

/**
 * The VMI's current launcher pod: among pods it controls, skip those on another node than a set
 * `status.nodeName` (that excludes migration target pods) and take the newest. A pod not bound
 * to a node yet is on another node too: a migration's target pod waiting for the scheduler is
 * the newest pod of the VMI, and taken for the current one it would lend the VMI its launcher
 * image (and network status) until it is bound elsewhere.
 */
export function currentVmiPod(vmi: VirtualMachineInstance, pods: readonly V1Pod[]): V1Pod | undefined {
  const node = vmi.status?.nodeName;
  let best: V1Pod | undefined;
  for (const pod of pods) {
    if (!isControlledBy(pod, vmi)) continue;
    if (node && pod.spec?.nodeName !== node) continue;
    if (!best || created(pod) > created(best)) best = pod;
  }
  return best;
}

function created(pod: V1Pod): number {
  const t = pod.metadata?.creationTimestamp;
  return t ? new Date(t).getTime() : 0;
}

function computeTerminated(pod: V1Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some((c) => c.name === COMPUTE_CONTAINER && c.state?.terminated !== undefined);
}

/** Phase Succeeded/Failed, or the compute container terminated, or the pod is being deleted. */
export function isPodDownOrGoingDown(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed' || computeTerminated(pod) || pod.metadata?.deletionTimestamp !== undefined;
}

/** Phase Succeeded or Failed: a pod that will never run again. */
export function isPodFinal(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/**
 * KubeVirt's IsPodReady: not down, `compute` (and `istio-proxy`) only need to be running, every
 * other container must be ready, and the pod phase is Running. This is the hand-off trigger.
 */
export function isPodReady(pod: V1Pod): boolean {
  if (isPodDownOrGoingDown(pod)) return false;
  for (const c of pod.status?.containerStatuses ?? []) {
    if (c.name === COMPUTE_CONTAINER || c.name === 'istio-proxy') {
      if (c.state?.running === undefined) return false;
    } else if (!c.ready) {
      return false;
    }
  }
  return pod.status?.phase === 'Running';
}

/** `namespace/name`, the key pods are tracked by in deletion expectations. */
export function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** Waiting reasons that mean the image cannot be pulled (they override the sync error). */
export function imagePullProblem(pod: V1Pod): { reason: string; message: string } | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const reason = c.state?.waiting?.reason;
    if (reason === 'ErrImagePull' || reason === 'ImagePullBackOff') return { reason, message: c.state?.waiting?.message ?? reason };
  }
  return undefined;
}
