import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1DaemonSet, V1Node, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { nodeLiveness } from '../../../functions/node/liveness.ts';
import { isAliveLauncher, stuckVmis } from '../../../functions/node/stuck-vmis.ts';
import { DaemonSetCountError, virtHandlerVerdict } from '../../../functions/node/virt-handler-check.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const node = (heartbeat?: string): V1Node => ({ metadata: { name: 'node01', ...(heartbeat === undefined ? {} : { annotations: { 'kubevirt.io/heartbeat': heartbeat } }) } });

describe('node liveness (virt-handler heartbeat, 5 minutes)', () => {
  const cases: [string, V1Node | undefined, string][] = [
    ['a deleted node is unresponsive at once', undefined, 'unresponsive'],
    ['a node virt-handler never touched is responsive', node(), 'responsive'],
    ['a fresh heartbeat', node('2026-12-01T11:59:00Z'), 'responsive'],
    ['exactly five minutes old is still responsive (strictly before)', node('2026-12-01T11:55:00Z'), 'responsive'],
    ['five minutes and a second old', node('2026-12-01T11:54:59Z'), 'unresponsive'],
    ['an offset time zone parses', node('2026-12-01T13:58:00+02:00'), 'responsive'],
    ['an empty heartbeat does not parse', node(''), 'unknown'],
    ['garbage does not parse', node('yesterday'), 'unknown'],
  ];
  for (const [name, n, want] of cases) test(name, () => assert.equal(nodeLiveness(n, NOW).state, want));
});

const vmi = (name: string, phase: string, uid = `uid-${name}`, namespace = 'default'): VirtualMachineInstance => ({ metadata: { name, namespace, uid }, status: { phase } }) as VirtualMachineInstance;
const pod = (owner: string, extra: { phase?: string; kind?: string; namespace?: string; statuses?: ('running' | 'terminated')[] } = {}): V1Pod => ({
  metadata: { name: `virt-launcher-${owner}`, namespace: extra.namespace ?? 'default', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: extra.kind ?? 'VirtualMachineInstance', name: owner, uid: `uid-${owner}`, controller: true }] },
  status: { phase: extra.phase ?? 'Running', containerStatuses: (extra.statuses ?? []).map((s) => ({ name: 'compute', image: 'x', imageID: '', ready: s === 'running', restartCount: 0, state: s === 'running' ? { running: {} } : { terminated: { exitCode: 0 } } })) },
});

describe('stuck VMIs on an unresponsive node', () => {
  test('alive launchers', () => {
    const rows: [string, V1Pod, boolean][] = [
      ['running, no container statuses yet', pod('a'), true],
      ['one container still running', pod('a', { statuses: ['terminated', 'running'] }), true],
      ['every container terminated', pod('a', { statuses: ['terminated', 'terminated'] }), false],
      ['phase Failed', pod('a', { phase: 'Failed' }), false],
      ['phase Succeeded', pod('a', { phase: 'Succeeded' }), false],
      ['not controlled by a VMI', pod('a', { kind: 'ReplicaSet' }), false],
    ];
    for (const [name, p, want] of rows) assert.equal(isAliveLauncher(p), want, name);
  });

  test('Running/Scheduled VMIs without an alive pod of theirs (by UID, same namespace) are stuck', () => {
    const vmis = [vmi('has-pod', 'Running'), vmi('no-pod', 'Running'), vmi('sched', 'Scheduled'), vmi('scheduling', 'Scheduling'), vmi('pending', 'Pending'), vmi('done', 'Succeeded'), vmi('other-ns', 'Running')];
    const pods = [pod('has-pod'), pod('other-ns', { namespace: 'elsewhere' }), pod('sched', { statuses: ['terminated'] })];
    assert.deepEqual(stuckVmis(vmis, pods).map((v) => v.metadata?.name), ['no-pod', 'sched', 'other-ns']);
  });
});

describe('virt-handler DaemonSet check', () => {
  const ds = (desired: number, scheduled: number, ready: number): V1DaemonSet => ({ status: { desiredNumberScheduled: desired, currentNumberScheduled: scheduled, numberReady: ready, numberMisscheduled: 0 } });
  const rows: [string, number, V1DaemonSet[], string][] = [
    ['a handler pod on the node: present', 1, [], 'present'],
    ['healthy DaemonSet, no pod on this node: orphaned', 0, [ds(3, 3, 3)], 'orphaned'],
    ['desired ≠ scheduled but = ready: still running', 0, [ds(3, 2, 3)], 'orphaned'],
    ['desired ≠ ready but = scheduled: still running', 0, [ds(3, 3, 1)], 'orphaned'],
    ['desired differs from both: not running, wait', 0, [ds(3, 2, 1)], 'daemonset-not-running'],
  ];
  for (const [name, pods, sets, want] of rows) test(name, () => assert.equal(virtHandlerVerdict(pods, sets), want));
  test('zero or two DaemonSets fail the pass (transient)', () => {
    assert.throws(() => virtHandlerVerdict(0, []), DaemonSetCountError);
    assert.throws(() => virtHandlerVerdict(0, [ds(1, 1, 1), ds(1, 1, 1)]), /shouuld only be running one virt-handler DaemonSet/);
  });
});
