/**
 * Target pod timeouts (reference §d.4 `handlePendingPodTimeout`), pure: a target pod still in
 * phase Pending is deleted after 300 s if the scheduler reported it Unschedulable, and after 900 s
 * in any case; both measured from the pod's creationTimestamp, both overridable per migration by
 * annotation. Deleting it makes the migration fail ("target pod was removed").
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstanceMigration } from '../../shared/api/index.ts';

export const UNSCHEDULABLE_TIMEOUT_SECONDS = 300;
export const CATCH_ALL_PENDING_TIMEOUT_SECONDS = 900;
export const UNSCHEDULABLE_TIMEOUT_ANNOTATION = 'kubevirt.io/migrationUnschedulablePodTimeoutSeconds';
export const PENDING_TIMEOUT_ANNOTATION = 'kubevirt.io/migrationPendingPodTimeoutSeconds';

export type TimeoutDecision =
  /** Not a pending pod: nothing to time. */
  | { readonly kind: 'none' }
  /** Still within its time; look again after `seconds` (on the reconcile's clock). */
  | { readonly kind: 'wait'; readonly seconds: number; readonly unschedulable: boolean; readonly message?: string }
  /** Timed out: delete the pod; `message` is the SuccessfulDelete event text. */
  | { readonly kind: 'delete'; readonly unschedulable: boolean; readonly message: string };

function seconds(annotation: string | undefined, fallback: number): number {
  const n = annotation === undefined ? NaN : Number(annotation);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

function createdMs(pod: V1Pod): number | undefined {
  const t = pod.metadata?.creationTimestamp;
  return t === undefined ? undefined : new Date(t).getTime();
}

/** What to do about `pod`'s wait at `now` (epoch ms). */
export function pendingPodTimeout(pod: V1Pod, migration: VirtualMachineInstanceMigration, now: number): TimeoutDecision {
  if (pod.status?.phase !== 'Pending' || pod.metadata?.deletionTimestamp) return { kind: 'none' };
  const created = createdMs(pod);
  if (created === undefined) return { kind: 'none' };
  const annotations = migration.metadata?.annotations ?? {};
  const age = (now - created) / 1000;
  const podName = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const unschedulable = scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
  const catchAll = seconds(annotations[PENDING_TIMEOUT_ANNOTATION], CATCH_ALL_PENDING_TIMEOUT_SECONDS);
  if (unschedulable) {
    const limit = seconds(annotations[UNSCHEDULABLE_TIMEOUT_ANNOTATION], UNSCHEDULABLE_TIMEOUT_SECONDS);
    if (age >= limit) return { kind: 'delete', unschedulable, message: `unschedulable pod ${podName} timeout period exceeded` };
    return { kind: 'wait', seconds: Math.min(limit, catchAll) - age, unschedulable, message: scheduled?.message ?? 'target pod is unschedulable' };
  }
  if (age >= catchAll) return { kind: 'delete', unschedulable, message: `pending pod ${podName} timeout period exceeded` };
  return { kind: 'wait', seconds: catchAll - age, unschedulable };
}
