/**
 * Volume migration (`spec.updateVolumesStrategy: Migration`, reference-vm-vmi-depth §7): the
 * rules the VM controller, the VMI controller and the workload updater share. Pure.
 *
 * The VM controller writes `vmi.status.migratedVolumes` (source and destination claim per
 * volume) and points the VMI's volumes at the destination claims; the VMI controller marks the
 * VMI `VolumesChange=True`; the workload updater migrates it (label
 * `kubevirt.io/volume-update-migration`); the target virt-handler drops both once the copy is done.
 */
import type { VirtualMachineInstance } from '../api/index.ts';
import { BACKEND_PVC_LABEL } from './backend-storage.ts';

/** The VMI condition type of a volume change (KubeVirt's `VirtualMachineInstanceVolumesChange`). */
export const VOLUMES_CHANGE_CONDITION = 'VolumesChange';
/** The reason of `VolumesChange=False` when the VM's volumes were set back mid-migration. */
export const VOLUMES_CHANGE_CANCELLATION_REASON = 'VolumesChangeCancellation';
/** The message of `VolumesChange=True` (the VMI controller's). */
export const MIGRATE_VOLUMES_MESSAGE = 'migrate volumes';

/**
 * KubeVirt's `IsReadWriteOnceAccessMode`: a claim is RWO unless it offers a shared mode
 * (ReadWriteMany or ReadOnlyMany) — so ReadWriteOncePod, and a claim listing no modes, are too.
 */
export function isReadWriteOnce(modes: readonly string[] | undefined): boolean {
  return !(modes ?? []).some((m) => m === 'ReadWriteMany' || m === 'ReadOnlyMany');
}

/**
 * KubeVirt's `IsBackendStorageVolume`: the backend-storage entry of `status.volumeStatus`
 * (persistent TPM/EFI state), by its name prefix; the migration controller moves that claim itself.
 */
export function isBackendStorageVolumeStatus(name: string): boolean {
  return name.startsWith(BACKEND_PVC_LABEL);
}

/**
 * KubeVirt's `ValidateVolumesUpdateMigration`: why the volumes `migrated` (by volume name) cannot
 * be moved by a live migration of `vmi`, or undefined when they can. `StorageLiveMigratable=False`
 * rules it out; so does a ReadWriteOnce claim in `status.volumeStatus` that is not among them (the
 * target node could not mount it while the source holds it).
 */
export function volumeMigrationProblem(vmi: VirtualMachineInstance, migrated: Iterable<string>): string | undefined {
  const storage = (vmi.status?.conditions ?? []).find((c) => c.type === 'StorageLiveMigratable' && c.status === 'False');
  if (storage) return `cannot migrate the volumes as the VMI isn't migratable: ${storage.message ?? ''}`;
  const names = new Set(migrated);
  for (const v of vmi.status?.volumeStatus ?? []) {
    if (!v.persistentVolumeClaimInfo || isBackendStorageVolumeStatus(v.name)) continue;
    if (isReadWriteOnce(v.persistentVolumeClaimInfo.accessModes) && !names.has(v.name)) {
      return `cannot migrate the VM. The volume ${v.name} is RWO and not included in the migration volumes`;
    }
  }
  return undefined;
}

/** `IsVolumeMigrating`: the VMI has `VolumesChange=True`. */
export function isVolumeMigrating(vmi: VirtualMachineInstance): boolean {
  return (vmi.status?.conditions ?? []).some((c) => c.type === VOLUMES_CHANGE_CONDITION && c.status === 'True');
}
