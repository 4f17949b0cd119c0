/**
 * The migration controller's `sync` decision (reference §d.4), pure: from what was observed, the
 * one kind of mutation this pass makes. `reconcile.ts` performs it (creating the target pod only
 * after the limits grant a slot) and then writes the status.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { isPodDownOrGoingDown, isPodReady } from '../../shared/predicates/pods.ts';
import { attachmentReady } from './attachment-pod.ts';
import { backoffSeconds } from './backoff.ts';
import { handedOff, isFinal } from './phases.ts';
import { liveVmiPods } from './target-pod.ts';
import { pendingPodTimeout } from './timeouts.ts';

export interface Observed {
  readonly migration: VirtualMachineInstanceMigration;
  readonly vmi: VirtualMachineInstance;
  /** Every pod labelled with the VMI's UID. */
  readonly pods: readonly V1Pod[];
  readonly targetPod: V1Pod | undefined;
  readonly sourcePod: V1Pod | undefined;
  /** The VMI's migrations; only listed when needed (backoff), else empty. */
  readonly vmiMigrations: readonly VirtualMachineInstanceMigration[];
  /** The VMI has hotplugged volumes (KubeVirt's `VMIHasHotplugVolumes`): the target needs an attachment pod. */
  readonly hotplug: boolean;
  /** The target pod's attachment pod (only listed for a hotplug VMI with a target pod). */
  readonly attachmentPod: V1Pod | undefined;
}

export type SyncAction =
  | { readonly kind: 'none' }
  /** Nothing to do now; look again after `seconds` on the reconcile's clock. */
  | { readonly kind: 'wait'; readonly seconds: number; readonly why: string; readonly event?: { readonly reason: string; readonly message: string }; readonly unschedulableTarget?: V1Pod }
  | { readonly kind: 'create-target-pod' }
  | { readonly kind: 'delete-target-pod'; readonly pod: V1Pod; readonly event: { readonly reason: string; readonly message: string }; readonly unschedulable?: boolean }
  /** The target pod is ready and the VMI has hotplugged volumes: attach them on the target node. */
  | { readonly kind: 'create-attachment-pod'; readonly targetPod: V1Pod }
  | { readonly kind: 'hand-off'; readonly pod: V1Pod }
  | { readonly kind: 'mark-target-down' }
  | { readonly kind: 'request-abort' };

/** What this pass should do, given the migration's stored phase. */
export function decideSync(o: Observed, now: number): SyncAction {
  const { migration, vmi, targetPod } = o;
  const phase = migration.status?.phase ?? '';
  const deleting = migration.metadata?.deletionTimestamp !== undefined;
  const ours = handedOff(o);
  const ms = vmi.status?.migrationState;
  if (vmi.metadata?.deletionTimestamp) return { kind: 'none' };

  // Handed off, then the target went away before the source started: nobody else will say so.
  if (ours && !ms?.completed && !ms?.startTimestamp && (!targetPod || isPodDownOrGoingDown(targetPod)) && (isFinal(phase) || phase === 'PreparingTarget' || phase === 'TargetReady')) {
    return { kind: 'mark-target-down' };
  }
  if (isFinal(phase) || (ours && ms?.completed)) return { kind: 'none' };
  if (ms?.migrationUid && !ours && !ms.completed) return { kind: 'none' };

  if (deleting && !ours) {
    return targetPod && !targetPod.metadata?.deletionTimestamp
      ? { kind: 'delete-target-pod', pod: targetPod, event: { reason: 'SuccessfulDelete', message: `migration canceled and pod ${podName(targetPod)} is deleted` } }
      : { kind: 'none' };
  }
  if (deleting && ours && phase === 'Running' && !ms?.abortRequested) return { kind: 'request-abort' };

  if ((phase === '' || phase === 'Pending') && !targetPod) {
    if (vmi.status?.phase !== 'Running') return { kind: 'none' };
    const backoff = backoffSeconds(migration, o.vmiMigrations, now);
    if (backoff > 0) {
      const vmiName = `${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`;
      return { kind: 'wait', seconds: backoff, why: 'migration backoff', event: { reason: 'MigrationBackoff', message: `backoff migrating vmi ${vmiName}` } };
    }
    if (!o.sourcePod) return { kind: 'none' };
    // A previous migration's target may still be going: one pod besides the source at a time.
    if (liveVmiPods(o.pods).length > 1) return { kind: 'wait', seconds: 1, why: 'another pod of the VMI is still running' };
    return { kind: 'create-target-pod' };
  }

  if (targetPod && (phase === 'Pending' || phase === 'Scheduling') && !isPodReady(targetPod)) {
    const t = pendingPodTimeout(targetPod, migration, now);
    if (t.kind === 'delete') return { kind: 'delete-target-pod', pod: targetPod, event: { reason: 'SuccessfulDelete', message: t.message }, unschedulable: t.unschedulable };
    if (t.kind === 'wait') {
      return {
        kind: 'wait',
        seconds: t.seconds,
        why: t.unschedulable ? 'target pod unschedulable' : 'target pod pending',
        ...(t.unschedulable ? { event: { reason: 'migrationTargetPodUnschedulable', message: t.message ?? 'target pod is unschedulable' }, unschedulableTarget: targetPod } : {}),
      };
    }
    return { kind: 'none' };
  }
  // A hotplug VMI's volumes follow it: KubeVirt attaches them once the target pod is ready, in
  // Pending (which the migration does not leave before that pod is ready too).
  if (targetPod && phase === 'Pending' && o.hotplug && !o.attachmentPod && isPodReady(targetPod)) return { kind: 'create-attachment-pod', targetPod };
  // KubeVirt hands off in Scheduled; a ready pod (and attachment pod) in Pending or Scheduling
  // becomes Scheduled in this very pass, so handing off now saves a whole reconcile.
  if (targetPod && (phase === 'Pending' || phase === 'Scheduling' || phase === 'Scheduled') && !ours && isPodReady(targetPod) && attachmentReady(o.hotplug, o.attachmentPod)) {
    return { kind: 'hand-off', pod: targetPod };
  }
  return { kind: 'none' };
}

function podName(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
