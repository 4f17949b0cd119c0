/**
 * Whether a VMI's volume change can be carried out by a storage live migration (reference
 * node-drain-updates §3.2, `volMig`): `status.migratedVolumes` names the volumes being copied,
 * and the migration is valid unless storage live migration is ruled out or a ReadWriteOnce claim
 * would be left behind (shared/storage/volume-migration.ts, the VM controller's check too). Such a
 * VMI is migrated by the workload updater even when it is not `LiveMigratable`.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { volumeMigrationProblem } from '../../shared/storage/volume-migration.ts';

/** `volMig`: the VMI has migrated volumes and their migration is valid. */
export function isVolumeMigration(vmi: VirtualMachineInstance): boolean {
  const migrated = vmi.status?.migratedVolumes ?? [];
  return migrated.length > 0 && volumeMigrationProblem(vmi, migrated.map((v) => v.volumeName)) === undefined;
}
