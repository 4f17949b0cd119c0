/**
 * The replica set's status (reference-replicas-pools-clones.md §1.3, Q-R4, Q-R5): counts from the
 * active VMIs listed before this pass's actions, the canonical selector string, `ReplicaPaused`
 * following `spec.paused`, and `ReplicaFailure` added on a scale error (reason from the sign of
 * the difference) and never refreshed while it stays. Written only when something compared differs.
 */
import type {
  VirtualMachineInstance,
  VirtualMachineInstanceReplicaSet,
  VirtualMachineInstanceReplicaSetCondition,
  VirtualMachineInstanceReplicaSetStatus,
} from '../../shared/api/index.ts';
import { selectorString } from '../../shared/predicates/label-selector.ts';
import { isVmiReady } from '../../shared/predicates/vmis.ts';
import { desiredReplicas } from './spec-check.ts';

export const REPLICA_FAILURE = 'ReplicaFailure';
export const REPLICA_PAUSED = 'ReplicaPaused';

export interface StatusPlan {
  readonly status: VirtualMachineInstanceReplicaSetStatus;
  /** The event to record after a successful write, when the paused state changed. */
  readonly pausedEvent?: { readonly reason: 'SuccessfulPaused' | 'SuccessfulResumed'; readonly message: 'Paused' | 'Resumed' };
}

/** The status to write, or undefined when nothing KubeVirt compares has changed. */
export function planStatus(rs: VirtualMachineInstanceReplicaSet, active: readonly VirtualMachineInstance[], scaleError: string | undefined, now: string): StatusPlan | undefined {
  const old = rs.status ?? {};
  const conditions = old.conditions ?? [];
  const has = (type: string) => conditions.some((c) => c.type === type);
  const paused = rs.spec.paused === true;
  const replicas = active.length;
  const readyReplicas = active.filter(isVmiReady).length;
  const labelSelector = selectorString(rs.spec.selector);

  const changed =
    replicas !== (old.replicas ?? 0) ||
    readyReplicas !== (old.readyReplicas ?? 0) ||
    (scaleError !== undefined) !== has(REPLICA_FAILURE) ||
    paused !== has(REPLICA_PAUSED) ||
    labelSelector !== (old.labelSelector ?? '');
  if (!changed) return undefined;

  let next: VirtualMachineInstanceReplicaSetCondition[] = [...conditions];
  if (paused && !has(REPLICA_PAUSED)) next.push({ type: REPLICA_PAUSED, status: 'True', reason: 'Paused', message: 'Controller got paused', lastTransitionTime: now });
  if (!paused) next = next.filter((c) => c.type !== REPLICA_PAUSED);
  if (scaleError !== undefined && !has(REPLICA_FAILURE)) {
    const diff = active.length - desiredReplicas(rs);
    next.push({ type: REPLICA_FAILURE, status: 'True', reason: diff < 0 ? 'FailedCreate' : 'FailedDelete', message: scaleError, lastTransitionTime: now });
  }
  if (scaleError === undefined) next = next.filter((c) => c.type !== REPLICA_FAILURE);

  // `conditions` is omitempty in KubeVirt's type: no conditions is no field, not [].
  const { conditions: _old, ...rest } = old;
  const status: VirtualMachineInstanceReplicaSetStatus = { ...rest, replicas, readyReplicas, labelSelector, ...(next.length > 0 ? { conditions: next } : {}) };
  const wasPaused = has(REPLICA_PAUSED);
  if (paused === wasPaused) return { status };
  return { status, pausedEvent: paused ? { reason: 'SuccessfulPaused', message: 'Paused' } : { reason: 'SuccessfulResumed', message: 'Resumed' } };
}
