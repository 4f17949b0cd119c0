/**
 * Backend storage on migration (reference-vm-vmi-depth §2 "Migration", KubeVirt's
 * `handleBackendStorage` and the backend-storage hand-off), pure. A VMI with a persistent TPM, EFI
 * or CBT state keeps that state on its backend PVC; its migration target needs it too:
 * - before the target pod: the source PVC comes from the VMI's volume status; a source whose
 *   `status.accessModes[0]` is ReadWriteMany is shared by source and target, otherwise the
 *   migration gets its own target PVC, labelled `kubevirt.io/migrationName` (not yet the VMI's);
 *   both names go into `status.migrationState.{source,target}PersistentStatePVCName`;
 * - once the target domain is ready: the target PVC becomes the VMI's (one patch that labels it
 *   `persistent-state-for: <vmi>`, tests the migration label and removes it), then the source PVC
 *   is deleted;
 * - a migration that fails before that deletes its target PVC. A shared PVC is never touched.
 * `reconcile.ts` performs the plans.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { escapeJsonPointer, type JsonPatchOperation } from '../../shared/kube/client.ts';
import { BACKEND_PVC_LABEL, MIGRATION_NAME_LABEL } from '../../shared/storage/backend-storage.ts';

/** Source and target backend PVC names of a migration (equal when the PVC is shared). */
export interface PersistentStatePvcs {
  readonly source: string;
  readonly target: string;
}

/** What the target pod needs before it can be rendered. */
export type TargetBackendPlan =
  | { readonly kind: 'error'; readonly message: string }
  /** Render the target pod on `pvcs.target` (an existing claim, or the source's when shared). */
  | { readonly kind: 'use'; readonly pvcs: PersistentStatePvcs }
  /** Create the migration's target PVC first. */
  | { readonly kind: 'create'; readonly source: string };

/** True when the claim is ReadWriteMany as bound (`status.accessModes[0]`): source and target share it. */
export function sharedBackendPvc(pvc: V1PersistentVolumeClaim): boolean {
  return pvc.status?.accessModes?.[0] === 'ReadWriteMany';
}

/** This migration's own target PVCs (normally one): live claims labelled with its name. */
export function migrationTargetPvcs(pvcs: readonly V1PersistentVolumeClaim[], migration: VirtualMachineInstanceMigration): V1PersistentVolumeClaim[] {
  const name = migration.metadata?.name;
  return pvcs.filter((p) => name !== undefined && p.metadata?.labels?.[MIGRATION_NAME_LABEL] === name && p.metadata.deletionTimestamp === undefined);
}

/**
 * The backend plan for the target pod. `sourceName` is the VMI's current claim (its volume
 * status), `source` that claim as read (undefined: not found), `targets` the migration's own.
 */
export function planTargetBackend(sourceName: string | undefined, source: V1PersistentVolumeClaim | undefined, targets: readonly V1PersistentVolumeClaim[]): TargetBackendPlan {
  if (!sourceName) return { kind: 'error', message: 'no backend-storage PVC found in VMI volume status' };
  if (!source) return { kind: 'error', message: `backend-storage PVC ${sourceName} not found` };
  if (sharedBackendPvc(source)) return { kind: 'use', pvcs: { source: sourceName, target: sourceName } };
  const existing = targets[0]?.metadata?.name;
  return existing ? { kind: 'use', pvcs: { source: sourceName, target: existing } } : { kind: 'create', source: sourceName };
}

/** The PVC names a migration recorded, when it has its own target (not shared). */
export function ownTargetPvcs(migration: VirtualMachineInstanceMigration): PersistentStatePvcs | undefined {
  const ms = migration.status?.migrationState;
  const source = ms?.sourcePersistentStatePVCName;
  const target = ms?.targetPersistentStatePVCName;
  return source && target && source !== target ? { source, target } : undefined;
}

/** What to do with the backend PVCs after the target pod exists. */
export type BackendFollowUp =
  | { readonly kind: 'none' }
  /** Label the target PVC the VMI's (then delete the source, a separate step). */
  | { readonly kind: 'hand-off'; readonly target: string }
  | { readonly kind: 'delete-source'; readonly source: string }
  | { readonly kind: 'delete-target'; readonly target: string };

export interface FollowUpInput {
  readonly migration: VirtualMachineInstanceMigration;
  readonly vmi: VirtualMachineInstance;
  /** The migration's phase after this pass. */
  readonly phase: string;
  /** The recorded target PVC as read (undefined: gone). */
  readonly target: V1PersistentVolumeClaim | undefined;
  /** The recorded source PVC as read (undefined: gone). */
  readonly source: V1PersistentVolumeClaim | undefined;
}

/**
 * The next backend step of a migration with its own target PVC: the hand-off once the VMI shows
 * this migration's target domain ready, then the source's deletion; the target's deletion when the
 * migration failed while the target was still only the migration's.
 */
export function decideBackendFollowUp(input: FollowUpInput): BackendFollowUp {
  const { migration, vmi, target, source } = input;
  const pvcs = ownTargetPvcs(migration);
  if (!pvcs) return { kind: 'none' };
  const ms = vmi.status?.migrationState;
  const ours = ms?.migrationUid !== undefined && ms.migrationUid === migration.metadata?.uid;
  const stillTheMigrations = target !== undefined && target.metadata?.deletionTimestamp === undefined && target.metadata?.labels?.[MIGRATION_NAME_LABEL] === migration.metadata?.name;
  if (ours && ms?.targetNodeDomainReadyTimestamp && !ms.failed) {
    if (stillTheMigrations) return { kind: 'hand-off', target: pvcs.target };
    const handedOver = target?.metadata?.labels?.[BACKEND_PVC_LABEL] === vmi.metadata?.name;
    if (handedOver && source && source.metadata?.deletionTimestamp === undefined) return { kind: 'delete-source', source: pvcs.source };
    return { kind: 'none' };
  }
  if (input.phase === 'Failed' && stillTheMigrations) return { kind: 'delete-target', target: pvcs.target };
  return { kind: 'none' };
}

/** The hand-off patch of the target PVC: the VMI's label, only while it is still this migration's. */
export function backendHandoffPatch(migrationName: string, vmiName: string): JsonPatchOperation[] {
  const label = (key: string) => `/metadata/labels/${escapeJsonPointer(key)}`;
  // `add` sets the label whether or not it exists (a target PVC is created without it).
  return [
    { op: 'add', path: label(BACKEND_PVC_LABEL), value: vmiName },
    { op: 'test', path: label(MIGRATION_NAME_LABEL), value: migrationName },
    { op: 'remove', path: label(MIGRATION_NAME_LABEL) },
  ];
}
