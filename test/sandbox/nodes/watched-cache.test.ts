/**
 * The node side's informer (sandbox/nodes/watched-cache.ts) after its watch is dropped over
 * and over while nothing changes — what the chaos suite's fault loop does every few seconds. A
 * kubelet or virt-handler re-watches at once after a watch ends (client-go's reflector); the
 * sandbox's must too, or the simulated cluster goes blind while the controllers wait on it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApiServer } from '../../../sandbox/apiserver/index.ts';
import type { KubeObject } from '../../../sandbox/nodes/objects.ts';
import { WatchedCache } from '../../../sandbox/nodes/watched-cache.ts';
import { clients, waitFor } from './helpers.ts';

test('dropped four times in a row with no event in between, the cache still sees the next change within a second', async () => {
  // arrange
  const server = await startApiServer({ port: 0 });
  const kc = server.kubeConfig('node-sim');
  const { core } = clients(kc);
  const seen: string[] = [];
  const cache = new WatchedCache<KubeObject>({
    kc,
    path: '/api/v1/namespaces/default/configmaps',
    list: async () => (await core.listNamespacedConfigMap({ namespace: 'default' })) as never,
    onEvent: (event, obj) => seen.push(`${event} ${obj.metadata?.name ?? ''}`),
  });
  try {
    await cache.start();
    // act: the watch ends cleanly again and again (each time as soon as it is open again), with
    // nothing to report in between
    for (let i = 0; i < 4; i++) await waitFor(`watch ${i + 1} open, then dropped`, async () => server.faults.dropWatches() > 0 || undefined, 30_000);
    const createdAt = Date.now();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after-drops' } } });
    await waitFor('the cache to see the new ConfigMap', async () => seen.includes('add after-drops'), 20_000);
    const tookMs = Date.now() - createdAt;
    // assert
    assert.ok(tookMs < 1000, `the change reached the cache ${tookMs} ms after it was made (a backed-off re-watch)`);
  } finally {
    await cache.stop();
    await server.close();
  }
});

test('the cache keeps no managedFields, from the list or the watch, and an update built from a cached object keeps the stored ones', async () => {
  // arrange: one object before the list, one after it (seen through the watch)
  const server = await startApiServer({ port: 0 });
  const kc = server.kubeConfig('node-sim');
  const { core } = clients(kc);
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'listed' }, data: { a: '1' } } });
  const cache = new WatchedCache<KubeObject>({
    kc,
    path: '/api/v1/namespaces/default/configmaps',
    list: async () => JSON.parse(JSON.stringify(await core.listNamespacedConfigMap({ namespace: 'default' }))) as never,
    onEvent: () => {},
  });
  try {
    await cache.start();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'watched' }, data: { a: '1' } } });
    await waitFor('the watched ConfigMap in the cache', async () => cache.get('default', 'watched') !== undefined || undefined, 20_000);
    // act: an update built from the cached object
    const cached = cache.get('default', 'listed')!;
    await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'listed', body: { ...cached, data: { a: '2' } } as never });
    const stored = await core.readNamespacedConfigMap({ namespace: 'default', name: 'listed' });
    // assert
    assert.equal((cached.metadata as { managedFields?: unknown }).managedFields, undefined, 'listed object');
    assert.equal((cache.get('default', 'watched')!.metadata as { managedFields?: unknown }).managedFields, undefined, 'watched object');
    assert.ok((stored.metadata?.managedFields?.length ?? 0) > 0, 'the stored object keeps its managedFields');
  } finally {
    await cache.stop();
    await server.close();
  }
});
