/**
 * Whether a VMI's volume change can be carried out by a storage live migration (reference
 * node-drain-updates §3.2, `volMig`): `status.migratedVolumes` names the volumes being copied,
 * and the migration is valid unless storage live migration is ruled out (`StorageLiveMigratable`
 * False) or a ReadWriteOnce claim — which the target node cannot mount while the source holds
 * it — would be left behind, i.e. is not among the migrated volumes. The backend-storage volume
 * (persistent TPM/EFI state) is exempt: the migration controller hands its claim over itself.
 * Such a VMI is migrated by the workload updater even when it is not `LiveMigratable`.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { backendVolumeName } from '../../shared/storage/vm-volumes.ts';

type AccessMode = string;

/**
 * A claim only one node can mount read-write: it asks for ReadWriteOnce (or the stricter
 * ReadWriteOncePod) and offers no shared mode (ReadWriteMany, ReadOnlyMany).
 */
export function isReadWriteOnce(modes: readonly AccessMode[] | undefined): boolean {
  const m = modes ?? [];
  if (m.includes('ReadWriteMany') || m.includes('ReadOnlyMany')) return false;
  return m.includes('ReadWriteOnce') || m.includes('ReadWriteOncePod');
}

/** Why the VMI's migrated volumes cannot be migrated live; undefined when they can. */
export function volumeMigrationProblem(vmi: VirtualMachineInstance): string | undefined {
  if ((vmi.status?.conditions ?? []).some((c) => c.type === 'StorageLiveMigratable' && c.status === 'False')) {
    return 'the VMI is not storage live-migratable';
  }
  const migrated = new Set((vmi.status?.migratedVolumes ?? []).map((v) => v.volumeName));
  const backend = backendVolumeName(vmi.metadata?.name ?? '');
  for (const v of vmi.status?.volumeStatus ?? []) {
    if (!v.persistentVolumeClaimInfo || v.name === backend) continue;
    if (isReadWriteOnce(v.persistentVolumeClaimInfo.accessModes) && !migrated.has(v.name)) {
      return `the volume ${v.name} is RWO and not included in the migration volumes`;
    }
  }
  return undefined;
}

/** `volMig`: the VMI has migrated volumes and their migration is valid. */
export function isVolumeMigration(vmi: VirtualMachineInstance): boolean {
  return (vmi.status?.migratedVolumes ?? []).length > 0 && volumeMigrationProblem(vmi) === undefined;
}
