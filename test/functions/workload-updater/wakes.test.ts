/**
 * The workload updater's relay mapping (reference node-drain-updates §3.1): every event wakes the
 * one KubeVirt CR's key; a migration's update only when it changes what a pass reads of
 * migrations (final, running against the budget, its VMI, a workload-update migration); VMI
 * updates only while a hot-plug or volume change is in progress. The previous object reaches the
 * mapper as the relay passes it: a metadata stub (test/support/mapper-cases.ts).
 */
import { workloadUpdaterMapper } from '../../../functions/workload-updater/wakes.ts';
import { WORKLOAD_UPDATE_MIGRATION_ANNOTATION } from '../../../shared/api/vmi-eviction.ts';
import { describeMapperCases, type MapperCase, type MapperEvent } from '../../support/mapper-cases.ts';

const kv: MapperEvent = ['KubeVirt', 'ADDED', { metadata: { name: 'kubevirt', namespace: 'kubevirt' } }];
const migration = (phase: string, annotations: Record<string, string> = {}) => ({ metadata: { name: 'm', namespace: 'ns', annotations }, spec: { vmiName: 'a' }, status: { phase } });
const KEY = 'kubevirt/kubevirt';

const cases: MapperCase[] = [
  ['the KubeVirt CR wakes its own key', [kv], [KEY]],
  ['nothing wakes before a KubeVirt CR is seen', [['VirtualMachineInstanceMigration', 'ADDED', migration('')]], []],
  ['a migration added wakes the key', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('')]], [KEY]],
  ['a migration starting to run (it now counts against the budget) wakes it', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('Pending')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Scheduling')]], [KEY]],
  ['a running migration moving to its next phase does not', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('Scheduling')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('PreparingTarget')]], []],
  ['a migration that finished wakes it (its slot is free)', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('Running')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Succeeded')]], [KEY]],
  ['a migration gaining the workload-update annotation wakes it', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('Pending')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Pending', { [WORKLOAD_UPDATE_MIGRATION_ANNOTATION]: 'x' })]], [KEY]],
  ['a migration deleted wakes it', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('Running')], ['VirtualMachineInstanceMigration', 'DELETED', migration('Running')]], [KEY]],
  ['a migration update the mapper has no earlier version of wakes it', [kv, ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Running')]], [KEY]],
  ['a relist wakes it', [kv, ['VirtualMachineInstanceMigration', 'ADDED', migration('Running')], ['VirtualMachineInstanceMigration', 'RELIST', migration('Running')]], [KEY]],
  ['a VMI update with a hot-plug in progress wakes it', [kv, ['VirtualMachineInstance', 'MODIFIED', { metadata: { name: 'a', namespace: 'ns' }, status: { phase: 'Running', conditions: [{ type: 'VolumesChange', status: 'True' }] } }]], [KEY]],
  ['a VMI update without one does not', [kv, ['VirtualMachineInstance', 'MODIFIED', { metadata: { name: 'a', namespace: 'ns' }, status: { phase: 'Running' } }]], []],
];

describeMapperCases('workload updater relay mapping', 'workload-updater', () => workloadUpdaterMapper(), cases);
