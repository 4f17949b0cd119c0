/**
 * When a virt-launcher process would exit on its own, so the kubelet can complete its pod:
 * a WaitForFirstConsumer temporary pod (its command only echoes), its VMI finished (virt-handler shut the domain down), its VMI is gone, it was the source of a
 * migration that completed (the domain now runs on the target), or it was the target of a
 * migration that failed (the target domain is torn down).
 */
import { controllerOf, isTerminalPhase, type Pod, type Vmi } from './objects.ts';

/** Label every launcher pod carries. */
export const LAUNCHER_LABEL = { key: 'kubevirt.io', value: 'virt-launcher' } as const;
const MIGRATION_JOB_UID = 'kubevirt.io/migrationJobUID';
const EPHEMERAL_PROVISIONING = 'kubevirt.io/ephemeral-provisioning';

/** True for a virt-launcher pod (launcher or migration target). */
export function isLauncherPod(pod: Pod): boolean {
  return pod.metadata?.labels?.[LAUNCHER_LABEL.key] === LAUNCHER_LABEL.value;
}

/** The VMI a launcher pod belongs to: its controller ref of kind VirtualMachineInstance. */
export function owningVmi(pod: Pod): { name: string; uid: string } | undefined {
  const ref = controllerOf(pod);
  if (ref?.kind !== 'VirtualMachineInstance' || !ref.name || !ref.uid) return undefined;
  return { name: ref.name, uid: ref.uid };
}

/** How a running launcher pod ends, or undefined while it keeps running. `vmi` = its VMI if it
 * still exists (same uid). */
export function launcherExit(pod: Pod, vmi: Vmi | undefined): { phase: 'Succeeded' | 'Failed'; reason: string } | undefined {
  if (!isLauncherPod(pod) || pod.status?.phase !== 'Running') return undefined;
  // A WaitForFirstConsumer temporary pod only runs `echo bound PVCs`: it exits 0 at once.
  if (pod.metadata?.annotations?.[EPHEMERAL_PROVISIONING] === 'true') return { phase: 'Succeeded', reason: 'Completed' };
  if (!vmi) return { phase: 'Succeeded', reason: 'Completed' };
  const phase = vmi.status?.phase;
  if (isTerminalPhase(phase)) return phase === 'Failed' ? { phase: 'Failed', reason: 'Error' } : { phase: 'Succeeded', reason: 'Completed' };
  const ms = vmi.status?.migrationState;
  if (!ms?.completed) return undefined;
  const name = pod.metadata?.name;
  const isTarget = name === ms.targetPod || (ms.migrationUid !== undefined && pod.metadata?.labels?.[MIGRATION_JOB_UID] === ms.migrationUid);
  if (ms.failed) return isTarget ? { phase: 'Succeeded', reason: 'Completed' } : undefined;
  // Source of a completed migration: the domain now lives on the target node.
  // A pod labelled for another (later) migration is that migration's target, even when it landed
  // back on this migration's source node: it must keep running.
  const jobUid = pod.metadata?.labels?.[MIGRATION_JOB_UID];
  const otherMigration = jobUid !== undefined && jobUid !== ms.migrationUid;
  const isSource = !isTarget && (name === ms.sourcePod || (!otherMigration && pod.spec?.nodeName === ms.sourceNode && vmi.status?.nodeName !== ms.sourceNode));
  return isSource ? { phase: 'Succeeded', reason: 'Completed' } : undefined;
}
