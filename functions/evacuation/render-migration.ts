/**
 * The evacuation migration (reference node-drain-updates §2.2 step 7): generateName
 * `kubevirt-evacuation-`, annotated with the node it evacuates (which is how its creation is
 * observed against the node's expectations), priority system-critical — or system-maintenance
 * when the descheduler asked for the eviction.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { migrationFor } from '../../shared/api/migration-for.ts';
import { EVACUATION_MIGRATION_ANNOTATION, EVICTION_SOURCE_ANNOTATION } from '../../shared/api/vmi-eviction.ts';

export function renderEvacuationMigration(vmi: VirtualMachineInstance, nodeName: string): VirtualMachineInstanceMigration {
  const fromDescheduler = vmi.metadata?.annotations?.[EVICTION_SOURCE_ANNOTATION] === 'descheduler';
  return migrationFor(vmi, {
    generateName: 'kubevirt-evacuation-',
    annotations: { [EVACUATION_MIGRATION_ANNOTATION]: nodeName },
    priority: fromDescheduler ? 'system-maintenance' : 'system-critical',
  });
}
