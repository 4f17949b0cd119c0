/**
 * The reconcile's client with a view in front (shared/reconcile/view-client.ts), against the
 * sandbox API server: which reads the view answers, which go to the API server, and the write
 * fence (shared/reconcile/write-fence.ts) that keeps a pass from trusting a view older than its
 * key's own last writes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../sandbox/apiserver/index.ts';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { ApiCallCounter, countingKubeClient } from '../../shared/kube/call-counter.ts';
import type { MessageView } from '../../shared/relay/view.ts';
import { viewKubeClient, type ViewTally } from '../../shared/reconcile/view-client.ts';
import { fenceId, isBehindFence, readFence, recordFence } from '../../shared/reconcile/write-fence.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';

let api: ApiServer;
let kube: KubeClient;
before(async () => {
  api = await startApiServer({ port: 0 });
  kube = createKubeClient(api.kubeConfig('test'));
  await kube.create(PODS, { metadata: { name: 'p1', namespace: 'default', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } });
});
after(() => api?.close());

const podInView = { metadata: { name: 'p1', namespace: 'default', resourceVersion: '7', creationTimestamp: '2026-12-01T00:00:00Z', labels: { app: 'x' } }, status: { phase: 'Running' } };
const VIEW: MessageView = {
  reads: [
    { resource: 'pods', namespace: 'default', name: 'p1', items: [podInView] },
    { resource: 'pods', namespace: 'default', labelSelector: 'app=x', items: [podInView] },
    { resource: 'pods', namespace: 'default', labelSelector: 'app=none', items: [] },
  ],
};

function client(fence = new Map<string, string>(), view: MessageView = VIEW): { kube: KubeClient; counter: ApiCallCounter; tally: ViewTally } {
  const counter = new ApiCallCounter();
  const tally = { hits: 0, misses: 0 };
  return { kube: viewKubeClient(countingKubeClient(kube, counter), view, fence, tally), counter, tally };
}

test('"not older than" reads the view holds are answered from it, as the API client gives them (core dates as Dates); the rest go to the API server', async () => {
  // arrange
  const c = client();
  // act
  const got = await c.kube.get(PODS, 'default', 'p1', { resourceVersion: '1' });
  const listed = await c.kube.list(PODS, 'default', { labelSelector: 'app=x', resourceVersion: '1' });
  const quorum = await c.kube.get(PODS, 'default', 'p1');
  const empty = await c.kube.list(PODS, 'default', { labelSelector: 'app=none', resourceVersion: '1' });
  const other = await c.kube.get(VMIS, 'default', 'nope', { resourceVersion: '1' });
  // assert
  assert.equal(got?.status?.phase, 'Running', 'the view object, not the server one');
  assert.ok(got?.metadata?.creationTimestamp instanceof Date, 'core timestamps revived as the client revives them');
  assert.equal(listed.items.length, 1);
  assert.equal(quorum?.status?.phase, 'Pending', 'a consistent read always goes to the API server');
  assert.deepEqual(empty.items, [], 'an empty view answer was re-read from the server');
  assert.equal(other, undefined);
  assert.deepEqual({ hits: c.tally.hits, misses: c.tally.misses, apiCalls: c.counter.total() }, { hits: 2, misses: 3, apiCalls: 3 });
});

test('the write fence: a view object older than the key\'s own last write of it, or a list missing what it wrote, goes to the API server', async () => {
  // arrange: the view of a key whose pods are p1 (and p2, once it wrote it)
  const own: MessageView = { reads: VIEW.reads.filter((r) => r.labelSelector !== 'app=none') };
  const newer = client(new Map([[fenceId('pods', 'default', 'p1'), '8']]), own);
  const same = client(new Map([[fenceId('pods', 'default', 'p1'), '7']]), own);
  const created = client(new Map([[fenceId('pods', 'default', 'p2'), '9']]), own);
  // act
  const stale = await newer.kube.get(PODS, 'default', 'p1', { resourceVersion: '1' });
  const fresh = await same.kube.get(PODS, 'default', 'p1', { resourceVersion: '1' });
  await created.kube.list(PODS, 'default', { labelSelector: 'app=x', resourceVersion: '1' });
  // assert
  assert.equal(stale?.status?.phase, 'Pending', 'behind our write: read from the server');
  assert.equal(fresh?.status?.phase, 'Running', 'as new as our write: from the view');
  assert.deepEqual([newer.tally.misses, same.tally.hits, created.tally.misses], [1, 1, 1]);
});

test('fences: recorded from a pass\'s successful writes, merged with the earlier ones, kept per key; opaque versions count as behind', async () => {
  // arrange
  const state = openSqliteState();
  // act
  await recordFence(state.expectations, 'vmi/ns/a', new Map(), [
    { verb: 'create', resource: 'pods', namespace: 'ns', name: 'p', code: 201, resourceVersion: '10' },
    { verb: 'update', resource: 'virtualmachineinstances/status', namespace: 'ns', name: 'a', code: 200, resourceVersion: '11' },
    { verb: 'patch', resource: 'pods', namespace: 'ns', name: 'q', code: 409 },
  ], 1);
  await recordFence(state.expectations, 'vmi/ns/a', await readFence(state.expectations, 'vmi/ns/a'), [{ verb: 'patch', resource: 'pods/status', namespace: 'ns', name: 'p', code: 200, resourceVersion: '12' }], 2);
  const fence = await readFence(state.expectations, 'vmi/ns/a');
  // assert
  assert.deepEqual([...fence].sort(), [['pods/ns/p', '12'], ['virtualmachineinstances/ns/a', '11']]);
  assert.equal((await readFence(state.expectations, 'vmi/ns/b')).size, 0, 'another key has its own');
  assert.equal(isBehindFence(fence, 'pods/ns/p', '11'), true);
  assert.equal(isBehindFence(fence, 'pods/ns/p', '12'), false);
  assert.equal(isBehindFence(fence, 'pods/ns/p', 'abc'), true, 'not comparable: behind');
  assert.equal(isBehindFence(fence, 'pods/ns/other', '1'), false, 'not fenced');
  await state.close();
});

test('an empty answer marked as one counts only while the object it was marked with is the one served', async () => {
  // arrange: the VMI's view answer, and its pods' empty answer marked with it
  const vmi = { metadata: { name: 'v', namespace: 'default', resourceVersion: '5' } };
  const view: MessageView = {
    reads: [
      { resource: 'virtualmachineinstances.kubevirt.io', namespace: 'default', name: 'v', items: [vmi] },
      { resource: 'pods', namespace: 'default', labelSelector: 'app=none', items: [], trustEmptyWith: 'virtualmachineinstances.kubevirt.io/default/v' },
    ],
  };
  const served = { hits: 0, misses: 0 };
  const past = { hits: 0, misses: 0 };
  // act
  await viewKubeClient(kube, view, new Map(), served).list(PODS, 'default', { labelSelector: 'app=none', resourceVersion: '1' });
  await viewKubeClient(kube, view, new Map([[fenceId('virtualmachineinstances', 'default', 'v'), '6']]), past).list(PODS, 'default', { labelSelector: 'app=none', resourceVersion: '1' });
  // assert
  assert.deepEqual(served, { hits: 1, misses: 0 }, 'the VMI is served from the view: its pods\' emptiness too');
  assert.deepEqual(past, { hits: 0, misses: 1 }, 'the VMI is behind our own write: its pods are read anew');
});

test('a view is used whole or not at all: one object behind the fence sends every read of the pass to the API server', async () => {
  // arrange: an early message's view (VMI Scheduling, its pod unbound), delivered again after the key's pass wrote the VMI Scheduled
  const view: MessageView = {
    reads: [
      { resource: 'virtualmachineinstances.kubevirt.io', namespace: 'default', name: 'v', items: [{ metadata: { name: 'v', namespace: 'default', resourceVersion: '5' } }] },
      { resource: 'pods', namespace: 'default', labelSelector: 'app=x', items: [{ metadata: { name: 'p1', namespace: 'default', resourceVersion: '4' } }] },
    ],
  };
  const tally = { hits: 0, misses: 0 };
  const c = viewKubeClient(kube, view, new Map([[fenceId('virtualmachineinstances', 'default', 'v'), '9']]), tally);
  // act
  await c.get(VMIS, 'default', 'v', { resourceVersion: '1' });
  await c.list(PODS, 'default', { labelSelector: 'app=x', resourceVersion: '1' });
  // assert
  assert.deepEqual(tally, { hits: 0, misses: 2 }, 'the pods as they were must not meet the VMI as it is now');
});
