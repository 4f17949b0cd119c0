/**
 * The node controller end to end (issue 14): sandbox cluster ← relay → SQLite queue → node (and
 * VMI) functions, on a sped-up sandbox clock. A node whose virt-handler stops: after the
 * five-minute heartbeat timeout its `kubevirt.io/schedulable` label turns "false" and its VMIs
 * without a live launcher pod go Failed (NodeUnresponsive), while a VMI whose launcher still runs
 * is left alone. A deleted node's VMIs fail at once. And with every event for the node dropped
 * and every re-check timer it arms lost, the once-a-minute sweep (shared/reconcile/sweep.ts) alone
 * still has the node looked at, and its stuck VMI failed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NODES, PODS, VMIS } from '../../shared/api/resources.ts';
import type { KeyQueue } from '../../shared/queue/port.ts';
import { launcherPods, NS, startSlice, until, vmiManifest, type Slice } from './support.ts';

/** Simulated ms per real ms: five sandbox minutes pass in fifteen real seconds. */
const SPEED = 20;
const MIN = 60_000;

describe('node controller end to end', () => {
  let s: Slice;
  before(async () => {
    s = await startSlice({ speed: SPEED, nodes: 3 });
  });
  after(async () => {
    await s.stop();
  });

  async function runningOn(name: string, node: string): Promise<void> {
    await s.kube.create(VMIS, vmiManifest(name, { nodeSelector: { 'kubernetes.io/hostname': node } }));
    await until(`${name} Running on ${node}`, async () => {
      const v = await s.kube.get(VMIS, NS, name);
      return v?.status?.phase === 'Running' && v.status.nodeName === node;
    }, { problems: s.problems });
  }

  /** Marks the VMI's launcher pod Failed with its container terminated, as the kubelet reports a crash. */
  async function crashLauncher(name: string): Promise<void> {
    const vmi = await s.kube.get(VMIS, NS, name);
    const [pod] = await launcherPods(s.kube, vmi?.metadata?.uid ?? '');
    await s.kube.patch(PODS, NS, pod!, { type: 'merge', body: { status: { phase: 'Failed', containerStatuses: [{ name: 'compute', image: 'virt-launcher', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, reason: 'Error' } } }] } } }, { subresource: 'status' });
  }

  const stateOf = async (name: string) => {
    const v = await s.kube.get(VMIS, NS, name);
    return `${v?.status?.phase}/${v?.status?.reason ?? ''}`;
  };

  test('virt-handler stops: after the heartbeat timeout the node is unschedulable and VMIs without a live launcher fail', async () => {
    // arrange
    const [node01] = s.sandbox.nodeNames;
    await runningOn('hb-crashed', node01!);
    await runningOn('hb-alive', node01!);
    // act: virt-handler on node01 dies, then one launcher crashes (as the kubelet reports it)
    s.sandbox.virtHandlers.stopHandler(node01!);
    const stoppedAt = s.sandbox.clock.nowMs();
    await crashLauncher('hb-crashed');
    await until('hb-crashed Failed', async () => (await stateOf('hb-crashed')).startsWith('Failed'), { problems: s.problems, tries: 6000 });
    const failedAt = s.sandbox.clock.nowMs();
    // assert
    assert.equal(await stateOf('hb-crashed'), 'Failed/NodeUnresponsive');
    const heartbeat = Date.parse((await s.kube.get(NODES, undefined, node01!))?.metadata?.annotations?.['kubevirt.io/heartbeat'] ?? '');
    assert.ok(failedAt - heartbeat > 5 * MIN, `failed ${(failedAt - heartbeat) / 1000}s after the last heartbeat`);
    // Not much later than timeout + one re-check (the last beat came up to 2m12s before the
    // stop); the bound is loose because a loaded machine stretches sandbox time.
    assert.ok(failedAt - heartbeat < 5 * MIN + 5 * MIN, `failed ${(failedAt - heartbeat) / 1000}s after the last heartbeat`);
    assert.equal((await s.kube.get(NODES, undefined, node01!))?.metadata?.labels?.['kubevirt.io/schedulable'], 'false');
    assert.equal(await stateOf('hb-alive'), 'Running/', 'a VMI whose launcher still runs is left alone');
    console.log(`stuck VMI failed ${((failedAt - heartbeat) / 1000).toFixed(0)} sandbox s after the last heartbeat (${((failedAt - stoppedAt) / 1000).toFixed(0)} s after the stop)`);
  });

  test('no event and no timer reach the node controller: the sweep alone re-checks the node, and its stuck VMI fails after the heartbeat timeout', async () => {
    // arrange
    const node03 = s.sandbox.nodeNames[2]!;
    await runningOn('sw-crashed', node03);
    // Fault injection: from here on the node controller gets no key from the relay (no event) and
    // every re-check timer it arms is lost, as when a Lambda dies between arming its lease and
    // sending its timer. Only the sweep (a SWEEP cause) can queue a node key.
    const q = s.rt.queue as KeyQueue;
    const send = q.send.bind(q);
    const requeueAfter = q.requeueAfter.bind(q);
    let droppedEvents = 0;
    let lostTimers = 0;
    q.send = async (messages) => {
      const kept = messages.filter((m) => m.controller !== 'node' || m.cause.event === 'SWEEP');
      droppedEvents += messages.length - kept.length;
      return send(kept);
    };
    q.requeueAfter = async (controller, receipt, seconds) => {
      if (controller !== 'node') return requeueAfter(controller, receipt, seconds);
      lostTimers++;
      return q.ack(controller, receipt);
    };
    try {
      // act: virt-handler on node03 dies, then the VMI's launcher crashes
      s.sandbox.virtHandlers.stopHandler(node03);
      const stoppedAt = s.sandbox.clock.nowMs();
      await crashLauncher('sw-crashed');
      await until('sw-crashed Failed', async () => (await stateOf('sw-crashed')).startsWith('Failed'), { problems: s.problems, tries: 6000 });
      const failedAt = s.sandbox.clock.nowMs();
      // assert
      assert.equal(await stateOf('sw-crashed'), 'Failed/NodeUnresponsive');
      const heartbeat = Date.parse((await s.kube.get(NODES, undefined, node03))?.metadata?.annotations?.['kubevirt.io/heartbeat'] ?? '');
      assert.ok(failedAt - heartbeat > 5 * MIN, `failed ${(failedAt - heartbeat) / 1000}s after the last heartbeat`);
      assert.ok(failedAt - heartbeat < 5 * MIN + 5 * MIN, `failed ${(failedAt - heartbeat) / 1000}s after the last heartbeat`);
      assert.equal((await s.kube.get(NODES, undefined, node03))?.metadata?.labels?.['kubevirt.io/schedulable'], 'false');
      // A batch's trace entries are written once its reconciles return, so the VMI can be seen
      // Failed a moment before the pass that failed it is in the table.
      let passes = await s.rt.state.traces.recent('node', node03, s.sandbox.clock.nowMs());
      const patchedVmi = (p: (typeof passes)[number]) => p.writes.some((w) => w.verb === 'patch' && w.resource === 'virtualmachineinstances' && w.name === 'sw-crashed');
      for (let i = 0; i < 300 && !passes.some(patchedVmi); i++) {
        await new Promise((r) => setTimeout(r, 10));
        passes = await s.rt.state.traces.recent('node', node03, s.sandbox.clock.nowMs());
      }
      const failing = passes.filter(patchedVmi);
      assert.ok(failing.length > 0, `a node pass patched the VMI: ${JSON.stringify(passes.map((p) => `${p.cause.event}: ${p.writes.map((w) => `${w.verb} ${w.resource}/${w.name}`).join(', ')}`))}`);
      assert.deepEqual([...new Set(failing.map((p) => p.cause.event))], ['SWEEP'], 'the pass that failed the VMI was queued by the sweep');
      assert.ok(droppedEvents > 0 && lostTimers > 0, `the faults were exercised: ${droppedEvents} events dropped, ${lostTimers} timers lost`);
      const swept = passes.filter((p) => p.cause.event === 'SWEEP').length;
      console.log(`sweep only: stuck VMI failed ${((failedAt - heartbeat) / 1000).toFixed(0)} sandbox s after the last heartbeat (${((failedAt - stoppedAt) / 1000).toFixed(0)} s after the stop); ${swept} swept passes of ${node03}, ${droppedEvents} node events dropped, ${lostTimers} re-check timers lost`);
    } finally {
      q.send = send;
      q.requeueAfter = requeueAfter;
    }
  });

  test('a deleted node: its VMIs fail at once', async () => {
    // arrange
    const node02 = s.sandbox.nodeNames[1]!;
    await runningOn('del-1', node02);
    await runningOn('del-2', node02);
    // act
    const deletedAt = s.sandbox.clock.nowMs();
    await s.sandbox.deleteNode(node02);
    await until('del-1 and del-2 Failed', async () => (await stateOf('del-1')).startsWith('Failed') && (await stateOf('del-2')).startsWith('Failed'), { problems: s.problems });
    // assert: no heartbeat timeout is waited out (KubeVirt fails them on the Node delete event)
    const took = s.sandbox.clock.nowMs() - deletedAt;
    assert.ok(took < 5 * MIN, `failed ${took / 1000} sandbox s after the node was deleted`);
    console.log(`deleted node's VMIs: ${await stateOf('del-1')}, ${await stateOf('del-2')} after ${(took / 1000).toFixed(1)} sandbox s`);
  });
});
