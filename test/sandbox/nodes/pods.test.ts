import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.ts';
import { clients, createVmi, getPod, launcherPod, waitFor, VMIS } from './helpers.ts';
import type { Pod } from '../../../sandbox/nodes/objects.ts';

// 2 nodes with 4 CPUs each; the clock runs 1000× so simulated seconds pass in real milliseconds.
describe('scheduler + kubelet (no controller, pods made by hand)', () => {
  let sb: Sandbox;
  let api: ReturnType<typeof clients>;
  before(async () => {
    sb = await startSandbox({ nodes: 2, speed: 1000, nodeShape: { cpu: '4' } });
    api = clients(sb.apiServer.kubeConfig('test'));
  });
  after(async () => sb.stop());

  const condition = (p: Pod | undefined, type: string) => p?.status?.conditions?.find((c) => c.type === type);

  test('a launcher pod owned by a VMI is scheduled and runs', async () => {
    // arrange
    const vmi = await createVmi(api.custom, 'vmi-run');
    // act
    const created = await api.core.createNamespacedPod({ namespace: 'default', body: launcherPod(vmi) });
    // assert
    const pod = await waitFor('pod Running', async () => {
      const p = await getPod(api.core, created.metadata!.name!);
      return p?.status?.phase === 'Running' && p;
    });
    assert.match(pod.spec?.nodeName ?? '', /^node0[12]$/, 'bound to a sandbox node');
    assert.equal(condition(pod, 'PodScheduled')?.status, 'True');
    assert.equal(condition(pod, 'Ready')?.status, 'True');
    assert.match(pod.status?.podIP ?? '', /^10\.244\.\d+\.\d+$/);
    assert.ok(pod.status?.containerStatuses?.every((c) => c.ready && c.state?.running), 'every container running and ready');
  });

  test('a nodeSelector no node has leaves the pod Unschedulable with a message', async () => {
    // act
    // (no owner: a pod owned by a VMI that does not exist would be garbage-collected)
    const body = launcherPod({ name: 'nowhere', uid: 'u-nowhere' }, { nodeSelector: { 'kubevirt.io/schedulable': 'true', 'gpu.example.com/model': 'a100' } });
    delete body.metadata!.ownerReferences;
    const created = await api.core.createNamespacedPod({ namespace: 'default', body });
    // assert
    const cond = await waitFor('PodScheduled=False', async () => {
      const c = condition(await getPod(api.core, created.metadata!.name!), 'PodScheduled');
      return c?.status === 'False' && c;
    });
    assert.equal(cond.reason, 'Unschedulable');
    assert.match(cond.message ?? '', /0\/2 nodes are available: 2 node\(s\) didn't match Pod's node affinity\/selector/);
    const p = await getPod(api.core, created.metadata!.name!);
    assert.equal(p?.spec?.nodeName, undefined, 'never bound');
  });

  test('capacity is respected, and an unschedulable pod is retried when room appears', async () => {
    // arrange: 3 pods of 3 CPUs on 2 nodes of 4 CPUs
    const big = (n: string) => ({ metadata: { name: n, namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '3' } } }] } });
    // act
    for (const n of ['big-1', 'big-2', 'big-3']) await api.core.createNamespacedPod({ namespace: 'default', body: big(n) });
    // assert
    const placed = await waitFor('two bound, one unschedulable', async () => {
      const pods = await Promise.all(['big-1', 'big-2', 'big-3'].map((n) => getPod(api.core, n)));
      const bound = pods.filter((p) => p?.spec?.nodeName);
      const refused = pods.filter((p) => condition(p, 'PodScheduled')?.reason === 'Unschedulable');
      return bound.length === 2 && refused.length === 1 && { bound, refused };
    });
    assert.notEqual(placed.bound[0]!.spec!.nodeName, placed.bound[1]!.spec!.nodeName, 'one per node');
    assert.match(condition(placed.refused[0], 'PodScheduled')?.message ?? '', /Insufficient cpu/);
    // act: free a node
    await api.core.deleteNamespacedPod({ namespace: 'default', name: placed.bound[0]!.metadata!.name!, gracePeriodSeconds: 0 });
    // assert
    const waiting = placed.refused[0]!.metadata!.name!;
    await waitFor('the refused pod scheduled', async () => (await getPod(api.core, waiting))?.spec?.nodeName);
  });

  test("deleting the owner VMI garbage-collects its launcher pod", async () => {
    // arrange
    const vmi = await createVmi(api.custom, 'vmi-gc');
    const created = await api.core.createNamespacedPod({ namespace: 'default', body: launcherPod(vmi) });
    const name = created.metadata!.name!;
    await waitFor('pod Running', async () => (await getPod(api.core, name))?.status?.phase === 'Running');
    // act
    await api.custom.deleteNamespacedCustomObject({ ...VMIS, namespace: 'default', name: 'vmi-gc' });
    // assert
    await waitFor('launcher pod gone', async () => (await getPod(api.core, name)) === undefined);
  });

  test('the node side talks to the server under its own identity', () => {
    // assert: binds, status writes and watches are node-sim's; the test client never bound a pod
    const c = sb.apiServer.counters;
    assert.ok(c.count({ identity: 'node-sim', verb: 'watch' }) > 0, 'node-sim watches');
    assert.ok(c.count({ identity: 'node-sim', resource: 'pods/binding' }) > 0, 'node-sim binds pods');
    assert.equal(c.count({ identity: 'test', resource: 'pods/binding' }), 0, 'the test identity never binds');
  });
});
