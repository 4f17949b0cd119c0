/**
 * Which VMIs on an unresponsive node to fail (reference node-drain-updates §1.2 step 3.2): those
 * Running or Scheduled with no live launcher pod on the node — a VMI whose launcher still runs is
 * left alone, whatever its phase, because its guest may well be running.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';

export const NODE_UNRESPONSIVE_REASON = 'NodeUnresponsive';

/** A pod counts as alive unless it ended, or every one of its containers has terminated. */
export function isAliveLauncher(pod: V1Pod): boolean {
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller);
  if (owner?.kind !== 'VirtualMachineInstance') return false;
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return false;
  const statuses = pod.status?.containerStatuses ?? [];
  return !(statuses.length > 0 && statuses.every((s) => s.state?.terminated));
}

/** Phases a dead node's VMI is failed from; Scheduling, Pending, Unknown and final ones are not. */
export function isStuckPhase(vmi: VirtualMachineInstance): boolean {
  return vmi.status?.phase === 'Running' || vmi.status?.phase === 'Scheduled';
}

/** The VMIs (already filtered by phase) with no alive pod in their namespace controlled by them (by UID). */
export function stuckVmis(vmis: readonly VirtualMachineInstance[], podsOnNode: readonly V1Pod[]): VirtualMachineInstance[] {
  const alive = new Set(
    podsOnNode
      .filter(isAliveLauncher)
      .map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.ownerReferences?.find((r) => r.controller)?.uid ?? ''}`),
  );
  return vmis.filter((v) => isStuckPhase(v) && !alive.has(`${v.metadata?.namespace ?? ''}/${v.metadata?.uid ?? ''}`));
}

/** The JSON patch that fails a VMI (no `test` op, as upstream; VMIs have no status subresource). */
export function failVmiPatch(): { op: 'replace' | 'add'; path: string; value: string }[] {
  return [
    { op: 'replace', path: '/status/phase', value: 'Failed' },
    { op: 'add', path: '/status/reason', value: NODE_UNRESPONSIVE_REASON },
  ];
}
