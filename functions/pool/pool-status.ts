/**
 * The pool's status after a pass (reference §2.9), from the VMs read at its start: the selector
 * string, `replicas` (deleting VMs included), `readyReplicas` (VMs whose Ready condition is True),
 * and the two conditions — `ReplicaFailure` while a pass fails (kept unchanged while it stays,
 * removed on the first clean pass) and `ReplicaPaused` while paused — with the events their
 * changes emit. Pure.
 */
import type { VirtualMachine, VirtualMachinePool, VirtualMachinePoolCondition, VirtualMachinePoolStatus } from '../../shared/api/index.ts';
import { selectorString } from '../../shared/predicates/label-selector.ts';
import { isVmReady } from './update-plan.ts';
import type { SyncError } from './well-known.ts';

/** An event the status change emits (before the write). */
export interface StatusEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** The new status and the events to emit. */
export interface PoolStatusResult {
  readonly status: VirtualMachinePoolStatus;
  readonly events: readonly StatusEvent[];
}

/** The status of `pool` given its kept VMs and this pass's sync error. `now` is epoch ms. */
export function computePoolStatus(pool: VirtualMachinePool, vms: readonly VirtualMachine[], syncError: SyncError | undefined, now: number): PoolStatusResult {
  const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const events: StatusEvent[] = [];
  let conditions: VirtualMachinePoolCondition[] = [...(pool.status?.conditions ?? [])];
  const has = (type: string) => conditions.some((c) => c.type === type);
  if (syncError && !has('ReplicaFailure')) {
    conditions.push({ type: 'ReplicaFailure', status: 'True', reason: syncError.reason, message: syncError.message, lastTransitionTime: at });
    events.push({ type: 'Warning', reason: syncError.reason, message: syncError.message });
  } else if (!syncError) {
    conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  }
  if (pool.spec.paused === true && !has('ReplicaPaused')) {
    conditions.push({ type: 'ReplicaPaused', status: 'True', reason: 'SuccessfulPaused', message: 'Pool controller is paused', lastTransitionTime: at });
    events.push({ type: 'Normal', reason: 'SuccessfulPaused', message: 'Pool is paused' });
  } else if (pool.spec.paused !== true && has('ReplicaPaused')) {
    conditions = conditions.filter((c) => c.type !== 'ReplicaPaused');
    events.push({ type: 'Normal', reason: 'SuccessfulResume', message: 'Pool is unpaused' });
  }
  const status: VirtualMachinePoolStatus = {
    ...pool.status,
    labelSelector: selectorString(pool.spec.selector),
    replicas: vms.length,
    readyReplicas: vms.filter(isVmReady).length,
  };
  if (conditions.length > 0) status.conditions = conditions;
  else delete status.conditions;
  return { status, events };
}
