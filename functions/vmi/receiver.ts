/**
 * A receiver VMI: the target side of a decentralized migration, created with
 * `kubevirt.io/create-migration-target: "true"` (KubeVirt's `IsMigrationTarget`). Until the
 * migration controller labels it `kubevirt.io/migrationTargetNodeName` it waits in
 * `WaitingForSync` and gets no launcher pod; losing its pod, or a failed migration, sends it back
 * to `WaitingForSync` rather than `Failed` (`lifecycle.go` `sync`, `updateStatus`).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';

export const CREATE_MIGRATION_TARGET_ANNOTATION = 'kubevirt.io/create-migration-target';
const MIGRATION_TARGET_NODE_LABEL = 'kubevirt.io/migrationTargetNodeName';

/** `IsMigrationTarget`. */
export function isReceiver(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata?.annotations?.[CREATE_MIGRATION_TARGET_ANNOTATION] === 'true';
}

/** A receiver not yet synchronized (no target-node label): nothing is created for it. */
export function receiverWaiting(vmi: VirtualMachineInstance): boolean {
  return isReceiver(vmi) && vmi.metadata?.labels?.[MIGRATION_TARGET_NODE_LABEL] === undefined;
}

/** `PodIsDown`: phase Succeeded or Failed (not the wider down-or-going-down). */
export function podIsDown(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** A receiver whose migration failed (`migrationTargetFailed`). */
export function receiverFailed(vmi: VirtualMachineInstance): boolean {
  return isReceiver(vmi) && vmi.status?.migrationState?.failed === true;
}
