/**
 * The evacuation controller's relay mapping (reference node-drain-updates §2.1): which node a
 * Node, VMI or migration event wakes, and the VMI events it leaves out because the node's pass
 * would consider nothing (no NoSchedule taint on the node, the VMI not marked for eviction).
 */
import { evacuationMapper } from '../../../functions/evacuation/wakes.ts';
import { EVACUATION_MIGRATION_ANNOTATION } from '../../../shared/api/vmi-eviction.ts';
import { describeMapperCases, type MapperCase } from '../../support/mapper-cases.ts';

const node = (name: string, taints: object[] = []) => ({ metadata: { name }, spec: { taints } });
const drainTaint = { key: 'kubevirt.io/drain', effect: 'NoSchedule' };
const vmi = (name: string, nodeName: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, namespace: 'ns' }, status: { nodeName, ...extra } });

const cases: MapperCase[] = [
  ['a Node event wakes that node', [['Node', 'MODIFIED', node('n1')]], ['n1']],
  ['a Node update that keeps its taints (a status heartbeat) does not wake it', [['Node', 'MODIFIED', { ...node('n1', [drainTaint]), status: { phase: 'b' } }, { ...node('n1', [drainTaint]), status: { phase: 'a' } }]], []],
  ['a Node update that changes its taints wakes it', [['Node', 'MODIFIED', node('n1', [drainTaint]), node('n1')]], ['n1']],
  ['… or its schedulability', [['Node', 'MODIFIED', { ...node('n1'), spec: { unschedulable: true } }, node('n1')]], ['n1']],
  ['a Node deleted wakes it (the pass drops its expectations)', [['Node', 'DELETED', node('n1')]], ['n1']],
  ['a VMI event on an untainted node, the VMI not marked: no wake', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], []],
  ['a VMI event on a node not seen yet, not marked: no wake (the Node ADDED event makes the pass)', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')]], []],
  ['a VMI marked for eviction wakes its node', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1', { evacuationNodeName: 'n1' })]], ['n1']],
  ['a VMI whose mark went away wakes its node', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1'), vmi('a', 'n1', { evacuationNodeName: 'n1' })]], ['n1']],
  ['a VMI event on a node with the drain taint wakes it', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], ['n1']],
  ['any NoSchedule taint counts (the drain taint key is configurable)', [['Node', 'ADDED', node('n1', [{ key: 'custom/drain', effect: 'NoSchedule' }])], ['VirtualMachineInstance', 'DELETED', vmi('a', 'n1')]], ['n1']],
  ['a NoExecute or PreferNoSchedule taint does not', [['Node', 'ADDED', node('n1', [{ key: 'x', effect: 'NoExecute' }, { key: 'y', effect: 'PreferNoSchedule' }])], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], []],
  ['the taint removed since: no wake', [['Node', 'ADDED', node('n1', [drainTaint])], ['Node', 'MODIFIED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('a', 'n1')]], []],
  ['a VMI with no node: no wake', [['Node', 'ADDED', node('n1', [drainTaint])], ['VirtualMachineInstance', 'ADDED', vmi('a', '', { evacuationNodeName: 'n1' })]], []],
  ['an evacuation migration added wakes the node it names', [['VirtualMachineInstanceMigration', 'ADDED', { metadata: { name: 'm', namespace: 'ns', annotations: { [EVACUATION_MIGRATION_ANNOTATION]: 'n2' } }, spec: { vmiName: 'a' } }]], ['n2']],
  ['a migration update wakes the node of its VMI, as the relay last saw it', [['VirtualMachineInstanceMigration', 'MODIFIED', { metadata: { name: 'm', namespace: 'ns' }, spec: { vmiName: 'a' } }]], []],
  ['… once the VMI was seen on a node (whether or not that event woke it)', [['VirtualMachineInstance', 'ADDED', vmi('a', 'n1')], ['VirtualMachineInstanceMigration', 'MODIFIED', { metadata: { name: 'm', namespace: 'ns' }, spec: { vmiName: 'a' } }]], ['n1']],
];

describeMapperCases('evacuation relay mapping', 'evacuation', () => evacuationMapper(), cases);
