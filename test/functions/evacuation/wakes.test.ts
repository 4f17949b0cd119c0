/**
 * The evacuation controller's relay mapping (reference node-drain-updates §2.1): which node a
 * Node, VMI or migration event wakes, and the VMI events it leaves out because the node's pass
 * would consider nothing (no NoSchedule taint on the node, the VMI not marked for eviction), or
 * because nothing the pass reads changed. The previous object reaches the mapper as the relay
 * passes it: a metadata stub (test/support/mapper-cases.ts).
 */
import { evacuationMapper } from '../../../functions/evacuation/wakes.ts';
import { EVACUATION_MIGRATION_ANNOTATION } from '../../../shared/api/vmi-eviction.ts';
import { describeMapperCases, type MapperCase } from '../../support/mapper-cases.ts';

const node = (name: string, taints: object[] = []) => ({ metadata: { name }, spec: { taints } });
const migration = (phase: string) => ({ metadata: { name: 'm', namespace: 'ns' }, spec: { vmiName: 'a' }, status: { phase } });
const drainTaint = { key: 'kubevirt.io/drain', effect: 'NoSchedule' };
const vmi = (name: string, nodeName: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, namespace: 'ns' }, status: { nodeName, ...extra } });

const cases: MapperCase[] = [
  ['a Node event wakes that node', [['Node', 'MODIFIED', node('n1')]], ['n1']],
  ['a Node update that keeps its taints (a status heartbeat) does not wake it', [['Node', 'ADDED', node('n1', [drainTaint])], ['Node', 'MODIFIED', { ...node('n1', [drainTaint]), status: { phase: 'b' } }, node('n1', [drainTaint])]], []],
  ['a Node update that changes its taints wakes it', [['Node', 'ADDED', node('n1')], ['Node', 'MODIFIED', node('n1', [drainTaint]), node('n1')]], ['n1']],
  ['… their removal too', [['Node', 'ADDED', node('n1', [drainTaint])], ['Node', 'MODIFIED', node('n1'), node('n1', [drainTaint])]], ['n1']],
  ['… or its schedulability', [['Node', 'ADDED', node('n1')], ['Node', 'MODIFIED', { ...node('n1'), spec: { unschedulable: true } }, node('n1')]], ['n1']],
  ['a Node update the mapper has no earlier version of wakes it', [['Node', 'MODIFIED', node('n1'), node('n1')]], ['n1']],
  ['a Node deleted wakes it (the pass drops its expectations)', [['Node', 'DELETED', node('n1')]], ['n1']],
  ['a VMI event on an untainted node, the VMI not marked: no wake', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], []],
  ['a VMI event on a node not seen yet, not marked: no wake (the Node ADDED event makes the pass)', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')]], []],
  ['a VMI marked for eviction wakes its node', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', { evacuationNodeName: 'n1' })]], ['n1']],
  ['a VMI whose mark went away wakes its node', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', { evacuationNodeName: 'n1' })], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1'), vmi('a', 'n1', { evacuationNodeName: 'n1' })]], ['n1']],
  ['a VMI event on a node with the drain taint wakes it', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], ['n1']],
  ['… but not an update that changes nothing the pass reads (its pods, a hand-off time)', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', { phase: 'Running' })], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', { phase: 'Running', activePods: { x: 'n1' } })]], []],
  ...(
    [
      ['its migration starting', { migrationState: { startTimestamp: '2026-12-07T00:00:00Z' } }],
      ['its migration ending', { migrationState: { startTimestamp: '2026-12-07T00:00:00Z', endTimestamp: '2026-12-07T00:00:05Z' } }],
      ['its phase', { phase: 'Failed' }],
      ['its LiveMigratable condition', { phase: 'Running', conditions: [{ type: 'LiveMigratable', status: 'False' }] }],
      ['its eviction mark', { phase: 'Running', evacuationNodeName: 'n1' }],
    ] as const
  ).map(([what, status]): MapperCase => [`… an update of ${what} does`, [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', { phase: 'Running' })], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', status)]], ['n1']]),
  ['… its deletion does', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')], ['VirtualMachineInstance', 'MODIFIED', { ...vmi('a', 'n1'), metadata: { name: 'a', namespace: 'ns', deletionTimestamp: '2026-12-07T00:00:00Z' } }]], ['n1']],
  ['… its eviction strategy does', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')], ['VirtualMachineInstance', 'MODIFIED', { ...vmi('a', 'n1'), spec: { evictionStrategy: 'None' } }]], ['n1']],
  ['… its node label does (the pass lists by it)', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')], ['VirtualMachineInstance', 'MODIFIED', { ...vmi('a', 'n1'), metadata: { name: 'a', namespace: 'ns', labels: { 'kubevirt.io/nodeName': 'n1' } } }]], ['n1']],
  ['a VMI that left the tainted node wakes its new node once', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n2')]], ['n2']],
  ['… and then no more', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n2')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n2', { phase: 'Running' })]], []],
  ['any NoSchedule taint counts (the drain taint key is configurable)', [['Node', 'ADDED', node('n1', [{ key: 'custom/drain', effect: 'NoSchedule' }])], ['VirtualMachineInstance', 'DELETED', vmi('a', 'n1')]], ['n1']],
  ['a NoExecute or PreferNoSchedule taint does not', [['Node', 'ADDED', node('n1', [{ key: 'x', effect: 'NoExecute' }, { key: 'y', effect: 'PreferNoSchedule' }])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], []],
  ['the taint removed since: no wake', [['Node', 'ADDED', node('n1', [drainTaint])], ['Node', 'MODIFIED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], []],
  ['a VMI with no node: no wake', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'ADDED', vmi('a', '', { evacuationNodeName: 'n1' })]], []],
  ['an evacuation migration added wakes the node it names', [['VirtualMachineInstanceMigration', 'ADDED', { metadata: { name: 'm', namespace: 'ns', annotations: { [EVACUATION_MIGRATION_ANNOTATION]: 'n2' } }, spec: { vmiName: 'a' } }]], ['n2']],
  ['a migration update wakes the node of its VMI, as the relay last saw it', [['VirtualMachineInstanceMigration', 'MODIFIED', { metadata: { name: 'm', namespace: 'ns' }, spec: { vmiName: 'a' } }]], []],
  ['… once the VMI was seen on a node (whether or not that event woke it)', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Pending')]], ['n1']],
  ['a migration moving from phase to phase unfinished does not wake it (the pass reads only whether it is final)', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')], ['VirtualMachineInstanceMigration', 'ADDED', migration('')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Scheduling')]], []],
  ['a migration that finished wakes it (the VMI may need another)', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')], ['VirtualMachineInstanceMigration', 'ADDED', migration('')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Running')], ['VirtualMachineInstanceMigration', 'MODIFIED', migration('Failed')]], ['n1']],
  ['a migration deleted wakes it', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')], ['VirtualMachineInstanceMigration', 'ADDED', migration('Running')], ['VirtualMachineInstanceMigration', 'DELETED', migration('Running')]], ['n1']],
  ['a migration seen again in a relist wakes it', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')], ['VirtualMachineInstanceMigration', 'ADDED', migration('Running')], ['VirtualMachineInstanceMigration', 'RELIST', migration('Running')]], ['n1']],
];

describeMapperCases('evacuation relay mapping', 'evacuation', () => evacuationMapper(), cases);
