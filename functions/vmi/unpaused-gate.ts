/**
 * The launcher pod's readiness gate `kubevirt.io/virtual-machine-unpaused` (reference.md §a.4):
 * the rendered pod declares it, so the kubelet keeps the pod un-Ready until someone sets the
 * condition — KubeVirt's VMI controller does, True/"NotPaused" unless the VMI is paused, then
 * False/"Paused". Without it a launcher pod never turns Ready, and neither does the VMI.
 *
 * Pure: decides the strategic-merge patch of the pod's `status` subresource, or nothing.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { VIRTUAL_MACHINE_UNPAUSED_CONDITION, VMI_CONDITION } from '../../shared/api/well-known.ts';
import type { Patch } from '../../shared/kube/client.ts';
import { isPodDownOrGoingDown, isTempPod } from '../../shared/predicates/pods.ts';

/** The condition the pod should carry for this VMI, with KubeVirt's reason and message. */
export function desiredUnpaused(vmi: VirtualMachineInstance): { status: 'True' | 'False'; reason: 'NotPaused' | 'Paused'; message: string } {
  const paused = vmi.status?.conditions?.some((c) => c.type === VMI_CONDITION.Paused && c.status === 'True') ?? false;
  return paused ? { status: 'False', reason: 'Paused', message: 'the virtual machine is paused' } : { status: 'True', reason: 'NotPaused', message: 'the virtual machine is not paused' };
}

/**
 * The status patch that brings `pod`'s unpaused condition in line with `vmi`, or `undefined` when
 * there is nothing to do: no launcher pod (a WaitForFirstConsumer temp pod is not one), a pod going down (its readiness no longer matters, and the
 * write could race its deletion), a pod that does not declare the gate (rendered by something
 * else), or nothing to change as KubeVirt's VMI controller decides it: it compares the status
 * only, and pauses a pod only from True (a paused VMI's pod without the condition keeps none).
 * That makes this one write per launcher pod (and per pause/unpause), not one per reconcile.
 *
 * Strategic merge patch, because it merges `status.conditions` by `type`: the kubelet's own
 * conditions are neither sent nor overwritten (a merge patch would replace the whole list).
 */
export function unpausedConditionPatch(vmi: VirtualMachineInstance, pod: V1Pod | undefined, now: string): Patch | undefined {
  if (!pod || isTempPod(pod) || isPodDownOrGoingDown(pod)) return undefined;
  if (!(pod.spec?.readinessGates ?? []).some((g) => g.conditionType === VIRTUAL_MACHINE_UNPAUSED_CONDITION)) return undefined;
  const want = desiredUnpaused(vmi);
  const have = pod.status?.conditions?.find((c) => c.type === VIRTUAL_MACHINE_UNPAUSED_CONDITION);
  const isTrue = have?.status === 'True';
  if (want.status === 'False' ? !isTrue : isTrue) return undefined;
  return {
    type: 'strategic',
    body: {
      status: {
        conditions: [{ type: VIRTUAL_MACHINE_UNPAUSED_CONDITION, status: want.status, reason: want.reason, message: want.message, lastProbeTime: now, lastTransitionTime: now }],
      },
    },
  };
}
