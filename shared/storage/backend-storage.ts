/**
 * Backend storage: the PVC that keeps a VMI's persistent TPM, persistent EFI variables and
 * changed-block-tracking state across restarts (reference-vm-vmi-depth §2, KubeVirt's
 * pkg/storage/backend-storage). Pure: when it is needed, which PVC belongs to a VMI, whether it
 * is ready, and the PVC to create (name, labels, owners, size, storage class, access mode).
 */
import type { V1OwnerReference, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';

/** The label naming the VMI (by name) a backend PVC belongs to. */
export const BACKEND_PVC_LABEL = 'persistent-state-for';
/** The label a migration's own target backend PVC carries in place of {@link BACKEND_PVC_LABEL} until the hand-off. */
export const MIGRATION_NAME_LABEL = 'kubevirt.io/migrationName';
/** The `status.volumeStatus` entry of the backend PVC. */
export const BACKEND_VOLUME_STATUS_NAME = 'persistent-state-for-this-vm';
/** `PVCSize`, and `CBTBackendStateOverhead` added while CBT is on. */
export const BACKEND_PVC_SIZE = '10Mi';
export const BACKEND_PVC_SIZE_WITH_CBT = '522Mi';
const DEFAULT_VIRT_CLASS = 'storageclass.kubevirt.io/is-default-virt-class';
const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';

/** A StorageClass, as far as these rules read it. */
export interface StorageClassLike {
  readonly metadata?: { readonly name?: string | undefined; readonly annotations?: Readonly<Record<string, string>> | undefined } | undefined;
  readonly volumeBindingMode?: string | undefined;
}

/** A CDI StorageProfile, as far as the access-mode choice reads it. */
export interface StorageProfileLike {
  readonly metadata?: { readonly name?: string | undefined } | undefined;
  readonly status?: { readonly claimPropertySets?: readonly { readonly accessModes?: readonly string[]; readonly volumeMode?: string }[] } | undefined;
}

/** Changed block tracking is on for the VMI (`HasCBTStateEnabled`: its status says Initializing or Enabled). */
export function cbtOn(vmi: VirtualMachineInstance): boolean {
  const state = (vmi.status as { changedBlockTracking?: { state?: string } } | undefined)?.changedBlockTracking?.state;
  return state === 'Initializing' || state === 'Enabled';
}

/** `IsBackendStorageNeeded`: a persistent TPM (not disabled), a persistent EFI, or CBT on. */
export function backendStorageNeeded(vmi: VirtualMachineInstance): boolean {
  const tpm = vmi.spec.domain.devices.tpm as { enabled?: boolean; persistent?: boolean } | undefined;
  if (tpm && tpm.enabled !== false && tpm.persistent === true) return true;
  if (vmi.spec.domain.firmware?.bootloader?.efi?.persistent === true) return true;
  return cbtOn(vmi);
}

/** `PVCForVMI`: the first live PVC labelled for the VMI, else the legacy one named `persistent-state-for-<vmi>`. */
export function backendPvcFor(vmiName: string, pvcs: readonly V1PersistentVolumeClaim[]): V1PersistentVolumeClaim | undefined {
  const live = pvcs.filter((p) => p.metadata?.deletionTimestamp === undefined);
  return live.find((p) => p.metadata?.labels?.[BACKEND_PVC_LABEL] === vmiName) ?? live.find((p) => p.metadata?.name === `${BACKEND_PVC_LABEL}-${vmiName}`);
}

export type BackendReadiness = { readonly ready: true } | { readonly ready: false; readonly error?: string };

/** `IsPVCReady`: Bound; Pending on a WaitForFirstConsumer class; otherwise why not. */
export function backendPvcReadiness(pvc: V1PersistentVolumeClaim, classes: readonly StorageClassLike[]): BackendReadiness {
  const phase = pvc.status?.phase ?? 'Pending';
  if (phase === 'Bound') return { ready: true };
  if (phase === 'Lost') return { ready: false, error: 'backend storage PVC lost' };
  if (phase !== 'Pending') return { ready: false };
  const className = pvc.spec?.storageClassName;
  if (!className) return { ready: false, error: 'no storage class name' };
  const sc = classes.find((c) => c.metadata?.name === className);
  if (!sc) return { ready: false, error: `storage class ${className} not found` };
  return sc.volumeBindingMode === 'WaitForFirstConsumer' ? { ready: true } : { ready: false };
}

/** The storage class and access mode of a new backend PVC, or the error KubeVirt reports. */
export function backendClassAndMode(vmStateStorageClass: string, classes: readonly StorageClassLike[], profiles: readonly StorageProfileLike[]): { className: string; accessMode: string } | { error: string } {
  let className = vmStateStorageClass;
  let mode = 'ReadWriteMany';
  if (!className) {
    // Of several annotated classes, the last listed wins (as KubeVirt's cache walk does).
    const flagged = (key: string) => classes.filter((c) => c.metadata?.annotations?.[key] === 'true').at(-1)?.metadata?.name;
    className = flagged(DEFAULT_VIRT_CLASS) ?? flagged(DEFAULT_CLASS) ?? '';
    if (!className) return { error: 'no default storage class found' };
    mode = 'ReadWriteOnce';
  }
  const sets = (profiles.find((p) => p.metadata?.name === className)?.status?.claimPropertySets ?? []).filter((s) => s.volumeMode === 'Filesystem');
  const modes = sets.flatMap((s) => s.accessModes ?? []);
  if (modes.includes('ReadWriteMany')) mode = 'ReadWriteMany';
  else if (modes.includes('ReadWriteOnce')) mode = 'ReadWriteOnce';
  return { className, accessMode: mode };
}

/** `CurrentPVCName`: the claim the VMI's `persistent-state-for-this-vm` volume status names, if any. */
export function currentBackendPvcName(vmi: VirtualMachineInstance): string | undefined {
  return vmi.status?.volumeStatus?.find((v) => v.name === BACKEND_VOLUME_STATUS_NAME)?.persistentVolumeClaimInfo?.claimName || undefined;
}

/**
 * The backend PVC for `vmi` (`createPVC`): owned by the VMI's owners (its VM), else by the VMI.
 * With `migrationName` it is that migration's target PVC: labelled `kubevirt.io/migrationName`
 * instead of `persistent-state-for`, so that nothing takes it for the VMI's until the hand-off.
 */
export function renderBackendPvc(vmi: VirtualMachineInstance, className: string, accessMode: string, migrationName?: string): V1PersistentVolumeClaim {
  const name = vmi.metadata?.name ?? '';
  const owners: V1OwnerReference[] = vmi.metadata?.ownerReferences?.length
    ? vmi.metadata.ownerReferences.map((r) => ({ ...r }))
    : [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name, uid: vmi.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }];
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      generateName: `${BACKEND_PVC_LABEL}-${name}-`,
      namespace: vmi.metadata?.namespace ?? '',
      labels: { ...(migrationName ? { [MIGRATION_NAME_LABEL]: migrationName } : { [BACKEND_PVC_LABEL]: name }), 'cdi.kubevirt.io/applyStorageProfile': 'true' },
      ownerReferences: owners,
    },
    spec: {
      accessModes: [accessMode],
      volumeMode: 'Filesystem',
      storageClassName: className,
      resources: { requests: { storage: cbtOn(vmi) ? BACKEND_PVC_SIZE_WITH_CBT : BACKEND_PVC_SIZE } },
    },
  };
}
