/**
 * The ready migration target pod's network annotations (KubeVirt's `updateTargetPodNetworkInfo`,
 * run on a ready target pod in `Scheduled`, before the hand-off): the same ones the VMI controller
 * keeps on a running launcher pod (shared/network/pod-annotations.ts `activePodNetworkAnnotations`)
 * — `kubevirt.io/network-info` built from the **target** pod's Multus network status, so the
 * target's launcher finds the SR-IOV VFs (and device-info binding devices) allocated on the target
 * node, not the source's, through its downward-API volume; and the Multus networks annotation when
 * an interface is to be plugged or unplugged. One JSON patch of the keys that differ; a failure
 * fails the pass (retried with backoff), as upstream.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { PODS } from '../../shared/api/resources.ts';
import type { NetworkBindingPlugin } from '../../shared/config/cluster-config.ts';
import { activePodNetworkAnnotations, podAnnotationOps } from '../../shared/network/pod-annotations.ts';
import type { MigrationDeps } from './deps.ts';

/** Writes the target pod's network annotations when they differ; answers the pod as it now is. */
export async function syncTargetPodNetworkInfo(vmi: VirtualMachineInstance, pod: V1Pod, bindings: Readonly<Record<string, NetworkBindingPlugin>>, deps: Pick<MigrationDeps, 'kube'>): Promise<V1Pod> {
  const changes = activePodNetworkAnnotations(vmi, pod, bindings);
  if (Object.keys(changes).length === 0) return pod;
  return deps.kube.patch(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', { type: 'json', ops: podAnnotationOps(pod, changes) });
}
