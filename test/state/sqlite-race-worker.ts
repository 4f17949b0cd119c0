/**
 * A worker thread for sqlite-state.test.ts: opens its own connection to the shared file and
 * races the other threads, then posts back one boolean per attempt.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';

interface RaceJob {
  path: string;
  thread: number;
  perThread: number;
  op: 'tryExpect' | 'acquire';
  t0: number;
}

const job = workerData as RaceJob;
const store = openSqliteState({ path: job.path });
const results: boolean[] = [];
for (let i = 0; i < job.perThread; i++) {
  results.push(
    job.op === 'tryExpect'
      ? await store.expectations.tryExpectCreations('pods', 'ns/vmi', 1, job.t0)
      : await store.leases.acquire('migrations/cluster', `ns/m-${job.thread}-${i}`, 5, job.t0, 60_000),
  );
}
await store.close();
parentPort?.postMessage(results);
