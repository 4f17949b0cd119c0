/**
 * The hand-off to virt-handler (reference §d.4 `handleTargetPodHandoff`), pure: the JSON patch that
 * writes a fresh `vmi.status.migrationState` for this migration and the label
 * `kubevirt.io/migrationTargetNodeName` (which wakes the target node's handler). `test` ops make
 * it conditional on the state and labels the controller read, so a decision taken on a stale VMI
 * fails with a Conflict instead of clobbering a newer write.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VMIMConfigurationOptions, VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationState } from '../../shared/api/index.ts';
import { MEMORY_OVERHEAD_BYTES_ANNOTATION } from '../../shared/api/well-known.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { bytesAsBinaryQuantity } from '../../shared/api/quantity.ts';

export const MIGRATION_TARGET_NODE_LABEL = 'kubevirt.io/migrationTargetNodeName';

export interface HandoffInput {
  readonly vmi: VirtualMachineInstance;
  readonly migration: VirtualMachineInstanceMigration;
  readonly targetPod: V1Pod;
  /** The target pod's attachment pod (a VMI with hotplugged volumes): virt-handler mounts from it. */
  readonly attachmentPod?: V1Pod | undefined;
  readonly sourcePodName: string | undefined;
  readonly policyName: string | undefined;
  readonly configuration: VMIMConfigurationOptions;
}

/** The migrationState virt-handler starts from. */
export function handoffState(input: HandoffInput): VirtualMachineInstanceMigrationState {
  const { vmi, migration, targetPod } = input;
  // The annotation's bytes as the BinarySI quantity KubeVirt's migration controller writes.
  const annotated = targetPod.metadata?.annotations?.[MEMORY_OVERHEAD_BYTES_ANNOTATION];
  const overhead = annotated === undefined ? undefined : bytesAsBinaryQuantity(annotated);
  const own = migration.status?.migrationState;
  const sourcePod = own?.sourcePod ?? input.sourcePodName;
  return {
    migrationUid: migration.metadata?.uid ?? '',
    targetNode: targetPod.spec?.nodeName ?? '',
    sourceNode: vmi.status?.nodeName ?? '',
    targetPod: targetPod.metadata?.name ?? '',
    ...(sourcePod ? { sourcePod } : {}),
    ...(overhead ? { targetMemoryOverhead: overhead } : {}),
    ...(input.attachmentPod?.metadata?.uid ? { targetAttachmentPodUID: input.attachmentPod.metadata.uid } : {}),
    ...(input.policyName ? { migrationPolicyName: input.policyName } : {}),
    // The backend PVCs (backend-storage.ts), as handleTargetPodHandoff passes them on.
    ...(own?.sourcePersistentStatePVCName ? { sourcePersistentStatePVCName: own.sourcePersistentStatePVCName } : {}),
    ...(own?.targetPersistentStatePVCName ? { targetPersistentStatePVCName: own.targetPersistentStatePVCName } : {}),
    migrationConfiguration: input.configuration,
  };
}

/** The conditional patch of the VMI that hands the migration off. */
export function handoffPatch(input: HandoffInput): JsonPatchOperation[] {
  const { vmi } = input;
  const state = handoffState(input);
  const ops: JsonPatchOperation[] = [];
  const old = vmi.status?.migrationState;
  if (old) ops.push({ op: 'test', path: '/status/migrationState', value: old }, { op: 'replace', path: '/status/migrationState', value: state });
  else ops.push({ op: 'add', path: '/status/migrationState', value: state });
  const labels = vmi.metadata?.labels;
  const newLabels = { ...labels, [MIGRATION_TARGET_NODE_LABEL]: state.targetNode ?? '' };
  if (labels) ops.push({ op: 'test', path: '/metadata/labels', value: labels }, { op: 'replace', path: '/metadata/labels', value: newLabels });
  else ops.push({ op: 'add', path: '/metadata/labels', value: newLabels });
  return ops;
}

/** The failure reason of a migration whose target pod went down before it started (KubeVirt's text). */
export const TARGET_DOWN_REASON = 'Target pod is down';

/** Marks the VMI's migration failed before it started (target pod gone): `test` the UID first. */
export function targetDownPatch(vmi: VirtualMachineInstance, nowIso: string): JsonPatchOperation[] {
  const ms = vmi.status?.migrationState;
  return [
    { op: 'test', path: '/status/migrationState/migrationUid', value: ms?.migrationUid },
    { op: 'add', path: '/status/migrationState/failed', value: true },
    { op: 'add', path: '/status/migrationState/completed', value: true },
    { op: 'add', path: '/status/migrationState/failureReason', value: TARGET_DOWN_REASON },
    { op: 'add', path: '/status/migrationState/endTimestamp', value: nowIso },
    ...(ms?.startTimestamp ? [] : [{ op: 'add' as const, path: '/status/migrationState/startTimestamp', value: nowIso }]),
  ];
}

/** Asks virt-handler to abort a handed-off migration that is being deleted. */
export function abortPatch(vmi: VirtualMachineInstance): JsonPatchOperation[] {
  return [
    { op: 'test', path: '/status/migrationState/migrationUid', value: vmi.status?.migrationState?.migrationUid },
    { op: 'add', path: '/status/migrationState/abortRequested', value: true },
  ];
}
