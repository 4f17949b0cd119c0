/**
 * StateStore benchmark (never a timed test): ops/s of tryExpectCreations, satisfied and lease
 * acquire (+ release) on the SQLite store (WAL file) and on the DynamoDB store (DynamoDB Local on loopback —
 * an emulator, so its figures say little about AWS, where each call is a network round trip).
 * DynamoDB runs sequentially and with 16 calls in flight, as racing Lambda instances would.
 *
 *   npx node -e "import('./test/bench/state.bench.ts').then(async (m) => console.log(await m.run()))"
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTable, openDynamoDbState } from '../../shared/state/dynamodb-state.ts';
import type { StateStore } from '../../shared/state/port.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import { startDynamoDbLocal } from '../support/dynamodb-local.ts';

/** One call: `i` counts calls, `worker` is which of the in-flight callers makes it. */
type Op = (i: number, worker: number) => Promise<unknown>;

/** Runs `count` calls of `op` with `concurrency` in flight; returns calls per second. */
async function opsPerSecond(count: number, concurrency: number, op: Op): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (next < count) await op(next++, worker);
    }),
  );
  return Math.round(count / ((performance.now() - started) / 1000));
}

/** The three operations measured, each on fresh keys so every call does the full work. */
async function measureStore(store: StateStore, label: string, count: number, concurrency: number): Promise<Record<string, number>> {
  const now = Date.now();
  const scope = `bench-${label}-${concurrency}-${now}`;
  const counter = `bench/${label}/${concurrency}/${now}`;
  const suffix = concurrency === 1 ? '' : ` x${concurrency}`;
  return {
    [`${label} tryExpectCreations ops/s${suffix}`]: await opsPerSecond(count, concurrency, (i) =>
      store.expectations.tryExpectCreations(scope, `ns/vmi-${i}`, 1, now),
    ),
    [`${label} satisfied ops/s${suffix}`]: await opsPerSecond(count, concurrency, (i) => store.expectations.satisfied(scope, `ns/vmi-${i}`, now)),
    // A realistic counter: limit 5 with 3 live holders; each op takes a free slot and gives it
    // back (acquire + release), so the counter never fills and every acquire is a real admission.
    [`${label} lease acquire+release pairs/s${suffix}`]: await leasePairs(store, counter, count, concurrency, now),
  };
}

async function leasePairs(store: StateStore, counter: string, count: number, concurrency: number, now: number): Promise<number> {
  const counters = Array.from({ length: concurrency }, (_, c) => `${counter}/${c}`);
  for (const c of counters) for (const h of ['a', 'b', 'c']) await store.leases.acquire(c, h, 5, now, 600_000);
  return opsPerSecond(count, concurrency, async (i, worker) => {
    // Each in-flight caller keeps to its own counter, as per-node leases spread over nodes.
    const c = counters[worker] as string;
    if (!(await store.leases.acquire(c, `ns/m-${i}`, 5, now, 60_000))) throw new Error(`bench: ${c} unexpectedly full`);
    await store.leases.release(c, `ns/m-${i}`);
  });
}

/** Measures both implementations; starts (and stops) its own DynamoDB Local. */
export async function run(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  const dir = mkdtempSync(join(tmpdir(), 'state-bench-'));
  const sqlite = openSqliteState({ path: join(dir, 'state.db') });
  try {
    Object.assign(results, await measureStore(sqlite, 'sqlite', 20_000, 1));
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const ddb = await startDynamoDbLocal();
  const client = ddb.client();
  try {
    await ensureTable(client, 'state-bench');
    const store = openDynamoDbState({ tableName: 'state-bench', client });
    Object.assign(results, await measureStore(store, 'dynamodb-local', 200, 1));
    Object.assign(results, await measureStore(store, 'dynamodb-local', 640, 16));
  } finally {
    client.destroy();
    await ddb.stop();
  }
  return results;
}
