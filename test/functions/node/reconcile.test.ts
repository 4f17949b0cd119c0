import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { NODES, VMIS } from '../../../shared/api/resources.ts';
import { reconcileNode } from '../../../functions/node/reconcile.ts';
import { actions, createHandlerPod, createHandlerSet, createLauncher, createNode, createVmi, harness, type Harness } from './support.ts';

let server: ApiServer;
let h: Harness;

beforeEach(async () => {
  // A fresh cluster each: the DaemonSet check counts virt-handler DaemonSets cluster-wide.
  server = await startApiServer({ port: 0 });
  h = harness(server);
});
afterEach(async () => {
  await server.close();
});

const MIN = 60_000;
const HEALTHY = { desired: 2, scheduled: 2, ready: 2 };

async function vmiState(name: string): Promise<string> {
  const v = await h.kube.get(VMIS, 'default', name);
  return `${v?.status?.phase}/${v?.status?.reason ?? ''}`;
}

async function schedulableLabel(node: string): Promise<string | undefined> {
  return (await h.kube.get(NODES, undefined, node))?.metadata?.labels?.['kubevirt.io/schedulable'];
}

describe('node reconcile against the sandbox API server', () => {
  const quiet: [string, { heartbeatAgoMs?: number; schedulable?: string }][] = [
    ['a fresh heartbeat', { heartbeatAgoMs: MIN, schedulable: 'true' }],
    ['exactly five minutes old (strictly before counts)', { heartbeatAgoMs: 5 * MIN, schedulable: 'true' }],
    ['a node virt-handler never touched (no heartbeat)', { schedulable: 'true' }],
  ];
  for (const [name, node] of quiet) {
    test(`responsive: ${name} → no writes, re-checked in a minute`, async () => {
      // arrange
      await createNode(h.kube, 'node01', node);
      const vmi = await createVmi(h.kube, 'vm-a', 'node01', 'Running');
      void vmi;
      // act
      const outcome = await reconcileNode('node01', h.deps);
      // assert
      assert.deepEqual(actions(server).filter((a) => !a.startsWith('get') && !a.startsWith('list')), []);
      assert.deepEqual(outcome, { kind: 'requeue', afterSeconds: 60, why: 'node re-check' });
      assert.equal(await vmiState('vm-a'), 'Running/');
    });
  }

  test('heartbeat older than five minutes: node marked unschedulable, then VMIs without a live launcher failed', async () => {
    // arrange
    await createNode(h.kube, 'node01', { heartbeatAgoMs: 5 * MIN + 1000, schedulable: 'true' });
    await createHandlerSet(h.kube, 'virt-handler', HEALTHY);
    const lost = await createVmi(h.kube, 'lost', 'node01', 'Running');
    void lost;
    const scheduled = await createVmi(h.kube, 'sched', 'node01', 'Scheduled');
    void scheduled;
    const alive = await createVmi(h.kube, 'alive', 'node01', 'Running');
    await createLauncher(h.kube, alive, 'node01');
    const ended = await createVmi(h.kube, 'ended-pod', 'node01', 'Running');
    await createLauncher(h.kube, ended, 'node01', 'Failed');
    await createVmi(h.kube, 'scheduling', 'node01', 'Scheduling');
    await createVmi(h.kube, 'elsewhere', 'node02', 'Running');
    // act
    const outcome = await reconcileNode('node01', h.deps);
    // assert
    const writes = actions(server).filter((a) => !a.startsWith('get') && !a.startsWith('list'));
    assert.deepEqual(writes.slice(0, 3), ['event Normal NodeUnresponsive Node/node01', 'patch nodes node01', 'event Warning NodeUnresponsive Node/node01']);
    assert.deepEqual(new Set(writes.slice(3)), new Set([
      'event Normal NodeUnresponsive VirtualMachineInstance/lost', 'patch virtualmachineinstances lost',
      'event Normal NodeUnresponsive VirtualMachineInstance/sched', 'patch virtualmachineinstances sched',
      'event Normal NodeUnresponsive VirtualMachineInstance/ended-pod', 'patch virtualmachineinstances ended-pod',
    ]));
    assert.equal(await schedulableLabel('node01'), 'false');
    assert.deepEqual(
      await Promise.all(['lost', 'sched', 'ended-pod', 'alive', 'scheduling', 'elsewhere'].map(vmiState)),
      ['Failed/NodeUnresponsive', 'Failed/NodeUnresponsive', 'Failed/NodeUnresponsive', 'Running/', 'Scheduling/', 'Running/'],
    );
    assert.equal(outcome.kind, 'requeue');
  });

  const labels: [string, string | undefined][] = [['already "false"', 'false'], ['missing', undefined], ['another value', 'maybe']];
  for (const [name, label] of labels) {
    test(`unresponsive with the schedulable label ${name}: the node is not patched`, async () => {
      // arrange
      await createNode(h.kube, 'node01', { heartbeatAgoMs: 10 * MIN, ...(label === undefined ? {} : { schedulable: label }) });
      // act
      await reconcileNode('node01', h.deps);
      // assert
      assert.deepEqual(actions(server).filter((a) => a.includes('nodes') && !a.startsWith('get')), []);
      assert.equal(await schedulableLabel('node01'), label);
    });
  }

  test('a deleted node: its VMIs fail at once, no node patch, no orphan check, no re-check', async () => {
    // arrange
    const gone = await createVmi(h.kube, 'gone', 'node09', 'Running');
    void gone;
    // act
    const outcome = await reconcileNode('node09', h.deps);
    // assert
    assert.equal(await vmiState('gone'), 'Failed/NodeUnresponsive');
    assert.deepEqual(outcome, { kind: 'done' });
    assert.ok(!actions(server).some((a) => a.includes('daemonsets') || a.startsWith('patch nodes')), actions(server).join('\n'));
  });

  test('an unparsable heartbeat: nothing written and no re-check ("will not reenqueue")', async () => {
    // arrange
    await h.kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node01', annotations: { 'kubevirt.io/heartbeat': 'yesterday' }, labels: { 'kubevirt.io/schedulable': 'true' } } });
    await createVmi(h.kube, 'vm-a', 'node01', 'Running');
    // act
    const outcome = await reconcileNode('node01', h.deps);
    // assert
    assert.deepEqual(outcome, { kind: 'done' });
    assert.deepEqual(actions(server), []);
  });

  test('the virt-handler pod is still on the node: no orphan Warning', async () => {
    // arrange
    await createNode(h.kube, 'node01', { heartbeatAgoMs: 10 * MIN, schedulable: 'false' });
    await createHandlerPod(h.kube, 'node01');
    await createVmi(h.kube, 'vm-a', 'node01', 'Running');
    // act
    await reconcileNode('node01', h.deps);
    // assert
    assert.ok(!actions(server).some((a) => a.startsWith('event Warning')), actions(server).join('\n'));
    assert.equal(await vmiState('vm-a'), 'Failed/NodeUnresponsive');
  });

  test('the DaemonSet is rolling out (desired ≠ scheduled and ≠ ready): no Warning, VMIs still failed', async () => {
    // arrange
    await createNode(h.kube, 'node01', { heartbeatAgoMs: 10 * MIN, schedulable: 'false' });
    await createHandlerSet(h.kube, 'virt-handler', { desired: 3, scheduled: 2, ready: 1 });
    await createVmi(h.kube, 'vm-a', 'node01', 'Running');
    // act
    await reconcileNode('node01', h.deps);
    // assert
    assert.ok(!actions(server).some((a) => a.startsWith('event Warning')));
    assert.equal(await vmiState('vm-a'), 'Failed/NodeUnresponsive');
  });

  for (const [name, sets] of [['no DaemonSet', []], ['two DaemonSets', ['virt-handler', 'virt-handler-2']]] as const) {
    test(`${name} and no handler pod: the pass fails (after the node patch), nothing failed yet`, async () => {
      // arrange
      await createNode(h.kube, 'node01', { heartbeatAgoMs: 10 * MIN, schedulable: 'true' });
      for (const s of sets) await createHandlerSet(h.kube, s, HEALTHY);
      await createVmi(h.kube, 'vm-a', 'node01', 'Running');
      // act
      const err = await reconcileNode('node01', h.deps).then(() => undefined, (e: unknown) => e as Error);
      // assert
      assert.match(err?.message ?? '', /shouuld only be running one virt-handler DaemonSet/);
      assert.equal(await schedulableLabel('node01'), 'false');
      assert.equal(await vmiState('vm-a'), 'Running/');
    });
  }

  test('a failing VMI patch does not stop the others; the errors are joined', async () => {
    // arrange
    await createNode(h.kube, 'node01', { heartbeatAgoMs: 10 * MIN, schedulable: 'false' });
    await createHandlerSet(h.kube, 'virt-handler', HEALTHY);
    await createVmi(h.kube, 'vm-a', 'node01', 'Running');
    await createVmi(h.kube, 'vm-b', 'node01', 'Running');
    server.faults.failNext(500, 1, { verb: 'patch', resource: 'virtualmachineinstances', identity: 'node-controller' });
    // act
    const err = await reconcileNode('node01', h.deps).then(() => undefined, (e: unknown) => e as Error);
    // assert
    assert.match(err?.message ?? '', /^failed to move vmi vm-[ab] in namespace default to final state: /);
    const states = await Promise.all(['vm-a', 'vm-b'].map(vmiState));
    assert.deepEqual(states.sort(), ['Failed/NodeUnresponsive', 'Running/']);
    assert.equal(actions(server).filter((a) => a.startsWith('event Normal NodeUnresponsive VirtualMachineInstance')).length, 2, 'the event goes out even when the patch fails');
  });

  test('the re-check is armed once: an event-driven pass inside the minute adds no second timer', async () => {
    // arrange
    await createNode(h.kube, 'node01', { heartbeatAgoMs: MIN, schedulable: 'true' });
    // act
    const first = await reconcileNode('node01', h.deps);
    h.advance(20_000);
    const eventDriven = await reconcileNode('node01', h.deps);
    h.advance(40_000);
    const timerFired = await reconcileNode('node01', h.deps);
    // assert
    assert.deepEqual([first.kind, eventDriven.kind, timerFired.kind], ['requeue', 'done', 'requeue']);
  });
});
