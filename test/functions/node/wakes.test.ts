/**
 * The node controller's relay mapping (reference node-drain-updates §1.1): Node events wake the
 * node; VMI adds and updates wake their node unless the relay's last view of it says virt-handler
 * is alive and will still be a minute from now.
 */
import { nodeMapper, RESPONSIVE_MARGIN_MS } from '../../../functions/node/wakes.ts';
import { HEARTBEAT_ANNOTATION, HEARTBEAT_TIMEOUT_MS } from '../../../functions/node/liveness.ts';
import { describeMapperCases, type MapperCase } from '../../support/mapper-cases.ts';

const NOW = Date.parse('2026-12-02T12:00:00Z');

const node = (name: string, heartbeat?: string) => ({ metadata: { name, ...(heartbeat !== undefined ? { annotations: { [HEARTBEAT_ANNOTATION]: heartbeat } } : {}) } });
const beatAgo = (ms: number) => new Date(NOW - ms).toISOString().replace(/\.\d+Z$/, 'Z');
const vmi = (nodeName: string) => ({ metadata: { name: 'a', namespace: 'ns' }, status: { nodeName } });

const cases: MapperCase[] = [
  ['a Node event wakes it', [['Node', 'MODIFIED', node('n1', beatAgo(0))]], ['n1']],
  ['a Node deleted wakes it', [['Node', 'DELETED', node('n1')]], ['n1']],
  ['a VMI on a node with a fresh heartbeat: no wake', [['Node', 'ADDED', node('n1', beatAgo(10_000))], ['VirtualMachineInstance', 'MODIFIED', vmi('n1')]], []],
  ['a VMI on a node virt-handler never touched (responsive by definition): no wake', [['Node', 'ADDED', node('n1')], ['VirtualMachineInstance', 'ADDED', vmi('n1')]], []],
  ['a VMI on a node whose heartbeat is past the timeout: wake', [['Node', 'ADDED', node('n1', beatAgo(HEARTBEAT_TIMEOUT_MS + 1000))], ['VirtualMachineInstance', 'MODIFIED', vmi('n1')]], ['n1']],
  ['… or will be within the margin: wake', [['Node', 'ADDED', node('n1', beatAgo(HEARTBEAT_TIMEOUT_MS - RESPONSIVE_MARGIN_MS + 1000))], ['VirtualMachineInstance', 'MODIFIED', vmi('n1')]], ['n1']],
  ['a VMI on a node not seen: wake', [['VirtualMachineInstance', 'ADDED', vmi('n1')]], ['n1']],
  ['a VMI on a node deleted since: wake (a deleted node is unresponsive at once)', [['Node', 'ADDED', node('n1', beatAgo(0))], ['Node', 'DELETED', node('n1')], ['VirtualMachineInstance', 'MODIFIED', vmi('n1')]], ['n1']],
  ['a heartbeat that does not parse: wake (the pass logs it)', [['Node', 'ADDED', node('n1', 'yesterday')], ['VirtualMachineInstance', 'MODIFIED', vmi('n1')]], ['n1']],
  ['a VMI deleted: no wake', [['VirtualMachineInstance', 'DELETED', vmi('n1')]], []],
  ['a VMI with no node: no wake', [['VirtualMachineInstance', 'ADDED', vmi('')]], []],
];

describeMapperCases('node relay mapping', 'node', () => nodeMapper({ now: () => NOW }), cases);
