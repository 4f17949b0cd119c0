/**
 * The limits over the real SQLite state store: many holders racing for slots never exceed either
 * limit, a node refusal gives the cluster slot back, release frees a slot, a crashed holder's
 * lease expires, and the fence keeps a slot whose lease lapsed while its migration still runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { CLUSTER_COUNTER, acquireSlots, nodeCounter, releaseSlots } from '../../../functions/migration/limits.ts';

const limits = { cluster: 5, perNode: 2 };
const T0 = 1_000_000;

test('12 racing holders on 3 source nodes: at most 5 in the cluster, 2 per node, no stranded cluster slot', async () => {
  // arrange
  const state = openSqliteState();
  const holders = Array.from({ length: 12 }, (_, i) => ({ holder: `default/m${i}`, sourceNode: `node0${(i % 3) + 1}` }));
  // act
  const verdicts = await Promise.all(holders.map((h) => acquireSlots(state.leases, { ...h, limits, now: T0, ttlMs: 60_000 })));
  // assert
  const granted = holders.filter((_, i) => verdicts[i] === undefined);
  const cluster = await state.leases.holders(CLUSTER_COUNTER, T0);
  assert.ok(granted.length <= 5, `granted ${granted.length}`);
  assert.deepEqual(cluster, granted.map((g) => g.holder).sort(), 'the cluster holders are exactly the granted ones (node refusals gave theirs back)');
  for (const n of ['node01', 'node02', 'node03']) assert.ok((await state.leases.holders(nodeCounter(n), T0)).length <= 2, n);
  await state.close();
});

test('release frees the slot; an unrenewed lease expires after its TTL', async () => {
  // arrange
  const state = openSqliteState();
  const one = { limits: { cluster: 1, perNode: 1 }, ttlMs: 60_000 };
  assert.equal(await acquireSlots(state.leases, { holder: 'a', sourceNode: 'n1', now: T0, ...one }), undefined);
  // act + assert
  assert.equal(await acquireSlots(state.leases, { holder: 'b', sourceNode: 'n2', now: T0, ...one }), 'cluster', 'the single slot is taken');
  assert.equal(await acquireSlots(state.leases, { holder: 'a', sourceNode: 'n1', now: T0 + 30_000, ...one }), undefined, 'the holder renews');
  await releaseSlots(state.leases, 'a', 'n1');
  assert.equal(await acquireSlots(state.leases, { holder: 'b', sourceNode: 'n2', now: T0 + 30_000, ...one }), undefined, 'released → b gets it');
  assert.equal(await acquireSlots(state.leases, { holder: 'c', sourceNode: 'n3', now: T0 + 30_000 + 60_000, ...one }), undefined, "b crashed: its lease expired and c gets the slot");
  await state.close();
});

test('fenced: a lease that lapsed under a slow reconcile does not free the slot of a migration the API shows running', async () => {
  // arrange
  const state = openSqliteState();
  const one = { limits: { cluster: 1, perNode: 1 }, ttlMs: 60_000 };
  assert.equal(await acquireSlots(state.leases, { holder: 'a', sourceNode: 'n1', now: T0, ...one }), undefined);
  const later = T0 + 60_000; // a's reconcile took longer than the TTL: its lease is gone
  let reads = 0;
  const apiShowsARunning = async () => {
    reads++;
    return [{ key: 'a', sourceNode: 'n1' }];
  };
  // act
  const b = await acquireSlots(state.leases, { holder: 'b', sourceNode: 'n2', now: later, ...one }, apiShowsARunning);
  const unfenced = await acquireSlots(state.leases, { holder: 'c', sourceNode: 'n3', now: later, ...one });
  // assert
  assert.equal(b, 'cluster', 'a still runs: b must wait');
  assert.equal(reads, 1);
  assert.deepEqual(await state.leases.holders(CLUSTER_COUNTER, later), ['c'], 'b gave its granted lease back (c, unfenced, got it: what the lease alone allowed)');
  assert.deepEqual(await state.leases.holders(nodeCounter('n2'), later), [], "and b's node lease");
  await state.close();
});

test('fenced: a poll refused by the leases reads nothing from the API', async () => {
  // arrange
  const state = openSqliteState();
  const one = { limits: { cluster: 1, perNode: 1 }, ttlMs: 60_000 };
  await acquireSlots(state.leases, { holder: 'a', sourceNode: 'n1', now: T0, ...one });
  let reads = 0;
  // act
  const b = await acquireSlots(state.leases, { holder: 'b', sourceNode: 'n2', now: T0, ...one }, async () => {
    reads++;
    return [];
  });
  // assert
  assert.equal(b, 'cluster');
  assert.equal(reads, 0);
  await state.close();
});
