/**
 * The local runtime's worker pool keeps the lease of a key it is reconciling: a reconcile slower
 * than the lease is not taken for a dead worker (delivered again, counted as a failed attempt),
 * while a worker that dies mid-reconcile still loses the key after one lease.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerPool } from '../../../infra/local/workers.ts';
import type { Logger } from '../../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { ReceivedKey } from '../../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../../shared/queue/sqlite-queue.ts';
import { done, type Outcome } from '../../../shared/reconcile/outcome.ts';
import { WorkerCrash } from '../../../shared/reconcile/worker-crash.ts';
import { keyMessage } from '../../queue/conformance.ts';

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
