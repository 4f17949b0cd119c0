/**
 * The watch hub's fan-out: one store event becomes one wire event per type, shared (frozen) by
 * every watcher that sees it as that type, so it is copied and encoded once, not once per
 * watcher; watcher-specific events (DELETED when an object stops matching) stay per watcher.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ResourceRegistry } from '../../../sandbox/apiserver/resources.ts';
import { parseFieldSelector, parseLabelSelector } from '../../../sandbox/apiserver/selectors.ts';
import { Store } from '../../../sandbox/apiserver/store.ts';
import type { KubeObject } from '../../../sandbox/apiserver/types.ts';
import { WatchHub, type WireEvent } from '../../../sandbox/apiserver/watch.ts';

const pods = new ResourceRegistry().byPath('', 'v1', 'pods')!;
const ctx = { identity: 'test', verb: 'create' };
const pod = (name: string, labels: Record<string, string>): KubeObject => ({ metadata: { name, namespace: 'default', uid: name, labels } });

function watcher(hub: WatchHub, selector = ''): WireEvent[] {
  const got: WireEvent[] = [];
  hub.open({ res: pods, label: parseLabelSelector(selector), field: parseFieldSelector('', pods) }, { send: (e) => got.push(e), end: () => {} }, {});
  return got;
}

test('watchers of one store event share one frozen wire event per type; a stopped match is their own DELETED', () => {
  // arrange
  const store = new Store();
  const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, tooLargeWaitMs: 1000, tooLargeAsGone: false });
  const all1 = watcher(hub);
  const all2 = watcher(hub);
  const web = watcher(hub, 'tier=web');
  // act
  store.put(pods, pod('a', { tier: 'web' }), ctx);
  store.put(pods, pod('a', { tier: 'db' }), { ...ctx, verb: 'update' });
  // assert
  assert.deepEqual(all1.map((e) => e.type), ['ADDED', 'MODIFIED']);
  assert.deepEqual(web.map((e) => e.type), ['ADDED', 'DELETED'], 'the relabel takes the pod out of the web watcher');
  assert.equal(all1[0], all2[0], 'one ADDED object for every watcher');
  assert.equal(all1[0], web[0], 'a filtered watcher that sees the same type shares it too');
  assert.equal(all1[1], all2[1], 'one MODIFIED object for every watcher');
  assert.ok(Object.isFrozen(all1[0]) && Object.isFrozen(all1[1]), 'shared events are frozen');
  assert.equal((all1[0]!.object as KubeObject).kind, 'Pod', 'wire events carry their type');
  const deleted = web[1]!.object as KubeObject;
  assert.equal(deleted.metadata.labels?.tier, 'web', 'the DELETED carries the state it last matched in');
  assert.equal(deleted.metadata.resourceVersion, (all1[1]!.object as KubeObject).metadata.resourceVersion, 'stamped with the event RV');
});

test('a stored object that leads with its apiVersion and kind is the shared event’s object itself (its encoding is the write’s answer’s); any other gets a copy that leads with them', () => {
  // arrange
  const store = new Store();
  const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, tooLargeWaitMs: 1000, tooLargeAsGone: false });
  const got = watcher(hub);
  const typed: KubeObject = { apiVersion: 'v1', kind: 'Pod', ...pod('typed', {}) };
  const trailing: KubeObject = { ...pod('trailing', {}), apiVersion: 'v1', kind: 'Pod' };
  // act
  store.put(pods, typed, ctx);
  store.put(pods, trailing, ctx);
  // assert
  const [first, second] = got.map((e) => e.object as KubeObject);
  assert.equal(first!.metadata.name, 'typed');
  assert.equal(first, store.peek(pods, 'default', 'typed'), 'the stored object, not a copy');
  assert.notEqual(second, store.peek(pods, 'default', 'trailing'), 'a copy');
  assert.deepEqual(Object.keys(second!).slice(0, 2), ['apiVersion', 'kind'], 'the copy leads with the type meta, as the wire does');
  assert.deepEqual(Object.keys(first!).slice(0, 2), ['apiVersion', 'kind']);
});
