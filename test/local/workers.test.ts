/**
 * The local runtime's worker pool keeps the lease of a key it is reconciling: a reconcile slower
 * than the lease is not taken for a dead worker (delivered again, counted as a failed attempt),
 * while a worker that dies mid-reconcile still loses the key after one lease. A batch of keys is
 * reconciled together and its trace entries written once.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerPool } from '../../local/workers.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { ReceivedKey } from '../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { done, type Outcome } from '../../shared/reconcile/outcome.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import type { Traces } from '../../shared/state/traces.ts';
import { WorkerCrash } from '../../shared/reconcile/worker-crash.ts';
import { keyMessage } from '../queue/conformance.ts';

const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };
const LEASE_MS = 150;

const cases: { name: string; work: (rk: ReceivedKey) => Promise<Outcome>; want: [string, number][] }[] = [
  {
    name: 'a reconcile 4× slower than the lease: delivered once, never handed to a second worker',
    work: async () => {
      await sleep(LEASE_MS * 4);
      return done;
    },
    want: [['ns/a', 1]],
  },
  {
    name: 'a worker that dies on the first delivery: the key comes back after the lease, as attempt 2',
    work: async (rk) => {
      if (rk.attempt === 1) throw new WorkerCrash('killed');
      return done;
    },
    want: [['ns/a', 1], ['ns/a', 2]],
  },
];

for (const c of cases) {
  test(c.name, async () => {
    // arrange
    const queue = new SqliteKeyQueue({ db: ':memory:', visibilityTimeoutMs: LEASE_MS });
    const deliveries: [string, number][] = [];
    let busy = 0;
    let overlapped = false;
    const pool = new WorkerPool({
      controller: 'vmi',
      concurrency: 3,
      queue,
      metrics: new MetricsRegistry(),
      log: quiet,
      pollMs: 20,
      handle: async (rk) => {
        deliveries.push([rk.message.key, rk.attempt]);
        overlapped ||= busy++ > 0;
        try {
          return await c.work(rk);
        } finally {
          busy--;
        }
      },
    });
    // act
    pool.start();
    await queue.send([keyMessage('ns/a', 1)]);
    await sleep(LEASE_MS * 8);
    await pool.stop();
    // assert
    assert.deepEqual(deliveries, c.want);
    assert.equal(overlapped, false, 'never two reconciles of the key at once');
    assert.equal((await queue.depth('vmi')).inFlight + (await queue.depth('vmi')).visible, 0, 'settled');
    await queue.close();
  });
}

test('batchSize 3: three keys reconcile together, their traces are written as one batch, each is settled', async () => {
  // arrange
  const queue = new SqliteKeyQueue({ db: ':memory:' });
  const state = openSqliteState({ db: new DatabaseSync(':memory:') });
  const batches: number[] = [];
  const traces: Traces = { ...state.traces, recordBatch: async (entries, now) => { batches.push(entries.length); await state.traces.recordBatch(entries, now); } };
  const metrics = new MetricsRegistry();
  let busy = 0;
  let peak = 0;
  const handle = instrumented({ controller: 'vmi', deps: () => ({}), reconcile: async () => {
    peak = Math.max(peak, ++busy);
    await sleep(30);
    busy--;
    return done;
  } }, { kube: {} as KubeClient, metrics, log: quiet });
  const pool = new WorkerPool({ controller: 'vmi', concurrency: 1, queue, metrics, log: quiet, pollMs: 20, batchSize: 3, traces, handle });
  await queue.send([keyMessage('ns/a', 1), keyMessage('ns/b', 1), keyMessage('ns/c', 1)]);
  // act
  pool.start();
  for (let i = 0; i < 100 && metrics.total('invocation_duration_seconds') < 1; i++) await sleep(20);
  await pool.stop();
  // assert
  assert.equal(peak, 3, 'the batch reconciled concurrently, as a Lambda invocation does');
  assert.deepEqual(batches, [3], 'one trace write for the batch');
  for (const key of ['ns/a', 'ns/b', 'ns/c']) assert.equal((await state.traces.recent('vmi', key, Date.now())).length, 1, key);
  assert.equal(metrics.total('invocation_duration_seconds'), 1, 'one invocation observed');
  const depth = await queue.depth('vmi');
  assert.equal(depth.inFlight + depth.visible, 0, 'every key settled');
  await queue.close();
  await state.close();
});

test("stop ends an idle worker's wait at once, however long its receive would wait", async () => {
  // arrange
  const queue = new SqliteKeyQueue({ db: ':memory:' });
  const pool = new WorkerPool({ controller: 'vmi', concurrency: 3, queue, metrics: new MetricsRegistry(), log: quiet, pollMs: 600_000, handle: async () => ({ kind: 'done' }) as never });
  pool.start();
  await sleep(20);
  // act
  const stopped = await Promise.race([pool.stop().then(() => 'stopped'), sleep(30_000, 'still waiting', { ref: false })]);
  await queue.close();
  // assert
  assert.equal(stopped, 'stopped');
});
