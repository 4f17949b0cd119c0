/**
 * The workload-update migration (reference node-drain-updates §3.2 step 7): generateName
 * `kubevirt-workload-update-`, the `kubevirt.io/workloadUpdateMigration` annotation (how its
 * creation is observed), the volume-update label when a volume update drives it, and priority
 * user-triggered for hot-plug/volume changes, system-critical for a launcher update.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { migrationFor } from '../../shared/api/migration-for.ts';
import { VOLUME_UPDATE_MIGRATION_LABEL, WORKLOAD_UPDATE_MIGRATION_ANNOTATION } from '../../shared/api/vmi-eviction.ts';
import { isHotplugInProgress, isVolumeUpdateInProgress } from './classify.ts';

export function renderWorkloadUpdateMigration(vmi: VirtualMachineInstance): VirtualMachineInstanceMigration {
  const name = vmi.metadata?.name ?? '';
  const volumes = isVolumeUpdateInProgress(vmi);
  const change = volumes || isHotplugInProgress(vmi);
  return migrationFor(vmi, {
    generateName: 'kubevirt-workload-update-',
    annotations: { [WORKLOAD_UPDATE_MIGRATION_ANNOTATION]: '' },
    // A label value is at most 63 characters: long names fall back to the UID.
    labels: volumes ? { [VOLUME_UPDATE_MIGRATION_LABEL]: name.length > 63 ? vmi.metadata?.uid ?? '' : name } : undefined,
    priority: change ? 'user-triggered' : 'system-critical',
  });
}
