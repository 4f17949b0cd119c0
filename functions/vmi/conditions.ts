/** VMI condition helpers: KubeVirt rewrites a condition only when its status or reason changes. */
import type { VirtualMachineInstanceCondition, VirtualMachineInstanceStatus } from '../../shared/api/index.ts';

export type Condition = VirtualMachineInstanceCondition;

export function findCondition(status: VirtualMachineInstanceStatus, type: string): Condition | undefined {
  return status.conditions?.find((c) => c.type === type);
}

/** Adds or replaces `cond` unless an existing one has the same status and reason. */
export function setCondition(status: VirtualMachineInstanceStatus, cond: Condition): void {
  const list = status.conditions ?? [];
  const i = list.findIndex((c) => c.type === cond.type);
  if (i >= 0) {
    const old = list[i]!;
    // An absent reason is an empty one (Go's omitempty string): virt-handler writes a Ready
    // copied from the pod with none, this controller computes `reason: ''`; set as different they
    // cost a VMI patch per VMI (and the pass its event wakes) that changes nothing.
    if (old.status === cond.status && (old.reason ?? '') === (cond.reason ?? '')) return;
    list[i] = cond;
  } else {
    list.push(cond);
  }
  status.conditions = list;
}

export function removeCondition(status: VirtualMachineInstanceStatus, type: string): void {
  if (!status.conditions) return;
  const kept = status.conditions.filter((c) => c.type !== type);
  if (kept.length !== status.conditions.length) status.conditions = kept;
}

/** A condition as KubeVirt serialises it: an empty reason or message (omitempty) is no field. */
export function condition(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string, now: string): Condition {
  return { type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}), lastProbeTime: null, lastTransitionTime: now };
}
