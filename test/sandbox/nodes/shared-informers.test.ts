/**
 * The node side's shared informers (sandbox/nodes/shared-informers.ts): components that ask
 * for the same collection share one list and one watch, and each still sees what an informer of
 * its own would have shown it — every object on start, its own indexes, and (with `where`) only
 * the objects it accepts, an object leaving that set arriving as a delete.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { listAllPods, MERGE_PATCH, nodeSideApi, type NodeSideApi } from '../../../sandbox/nodes/api.ts';
import type { Pod } from '../../../sandbox/nodes/objects.ts';
import { waitFor } from './helpers.ts';

const pod = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

describe('shared informers', () => {
  let server: ApiServer;
  let api: NodeSideApi;
  before(async () => {
    server = await startApiServer({ port: 0 });
    api = nodeSideApi(server.kubeConfig('node-sim'));
  });
  after(async () => server.close());

  test('two views of the pods: one list and one watch, each with its events, its indexes and its filter', async () => {
    // arrange: a pod exists before either view starts
    await api.core.createNamespacedPod({ namespace: 'default', body: pod('early', { app: 'a' }) });
    const all: string[] = [];
    const onlyA: string[] = [];
    const first = api.informers.informer<Pod>({ path: '/api/v1/pods', list: listAllPods(api), onEvent: (e, p) => all.push(`${e} ${p.metadata?.name}`) });
    const second = api.informers.informer<Pod>({
      path: '/api/v1/pods',
      list: listAllPods(api),
      where: (p) => p.metadata?.labels?.app === 'a',
      indexes: { app: (p) => [p.metadata?.labels?.app ?? ''] },
      onEvent: (e, p) => onlyA.push(`${e} ${p.metadata?.name}`),
    });
    const lists = server.counters.count({ identity: 'node-sim', verb: 'list', resource: 'pods' });
    // act
    await first.start();
    await second.start();
    await api.core.createNamespacedPod({ namespace: 'default', body: pod('other', { app: 'b' }) });
    await api.core.patchNamespacedPod({ namespace: 'default', name: 'early', body: { metadata: { labels: { app: 'b' } } } }, MERGE_PATCH);
    await waitFor('the first view to see the relabelling', async () => first.get('default', 'early')?.metadata?.labels?.app === 'b');
    // assert
    assert.equal(server.counters.count({ identity: 'node-sim', verb: 'list', resource: 'pods' }) - lists, 1, 'one list for both views');
    assert.equal(api.informers.watched, 1, 'one watch for both views');
    assert.deepEqual(all, ['add early', 'add other', 'update early']);
    assert.deepEqual(onlyA, ['add early', 'delete early'], 'the filtered view saw the pod leave its set as a delete');
    assert.equal(second.get('default', 'early'), undefined);
    assert.deepEqual(second.list(), []);
    assert.deepEqual(second.byIndex('app', 'a'), []);
    assert.equal(first.list().length, 2);
    // act: the first view leaves, the second keeps the watch
    await first.stop();
    await api.core.patchNamespacedPod({ namespace: 'default', name: 'other', body: { metadata: { labels: { app: 'a' } } } }, MERGE_PATCH);
    await waitFor('the second view to see the pod join its set', async () => second.get('default', 'other'));
    // assert
    assert.deepEqual(onlyA.at(-1), 'add other');
    assert.deepEqual(second.byIndex('app', 'a').map((p) => p.metadata?.name), ['other']);
    assert.deepEqual(all, ['add early', 'add other', 'update early'], 'no event after stop()');
    await second.stop();
    assert.equal(api.informers.watched, 0, 'the watch ends with its last view');
  });
});
