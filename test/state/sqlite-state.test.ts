/**
 * The conformance suite against the SQLite StateStore: once on a WAL file through two separate
 * connections, once in memory through two stores sharing one connection (as the embedded queue
 * shares it). SQLite-only behaviour (threads racing on one file, sharing, sweep) follows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { EXPECTATIONS_TIMEOUT_MS, FAILURE_COUNT_TTL_MS } from '../../shared/state/port.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import { GC_GRACE_MS } from '../../shared/state/validate.ts';
import { TRACE_ENTRIES_PER_KEY, TRACE_TTL_MS } from '../../shared/state/traces.ts';
import { registerStateConformance } from './conformance.ts';
import { traceEntry } from './conformance-traces.ts';

registerStateConformance('sqlite file (WAL), two connections', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'state-conformance-'));
  const path = join(dir, 'state.db');
  return {
    open: async () => openSqliteState({ path }),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

registerStateConformance('sqlite :memory:, one shared connection', async () => {
  const db = new DatabaseSync(':memory:');
  return {
    open: async () => openSqliteState({ db }),
    close: async () => db.close(),
  };
});

/** Runs `threads` worker threads that race `op` on one database file; returns every result. */
async function raceInThreads(path: string, threads: number, perThread: number, op: 'tryExpect' | 'acquire', t0: number): Promise<boolean[]> {
  const runs = Array.from({ length: threads }, (_, thread) => {
    const worker = new Worker(new URL('./sqlite-race-worker.ts', import.meta.url), {
      workerData: { path, thread, perThread, op, t0 },
    });
    return new Promise<boolean[]>((resolve, reject) => {
      worker.once('message', (m: boolean[]) => resolve(m));
      worker.once('error', reject);
      worker.once('exit', (code) => code !== 0 && reject(new Error(`race worker ${thread} exited with ${code}`)));
    });
  });
  return (await Promise.all(runs)).flat();
}

describe('sqlite state: beyond the conformance suite', () => {
  test('4 threads x 5 racing tryExpectCreations on one file: exactly one winner', async () => {
    // arrange
    const dir = mkdtempSync(join(tmpdir(), 'state-race-'));
    const path = join(dir, 'state.db');
    (await openSqliteState({ path }).close()); // create the schema once, before the race
    try {
      // act
      const results = await raceInThreads(path, 4, 5, 'tryExpect', Date.now());
      // assert
      assert.equal(results.length, 20);
      assert.equal(results.filter(Boolean).length, 1, `winners: ${JSON.stringify(results)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('4 threads x 8 racing lease acquirers with limit 5 on one file: exactly 5 holders', async () => {
    // arrange
    const dir = mkdtempSync(join(tmpdir(), 'state-race-'));
    const path = join(dir, 'state.db');
    const t0 = Date.now();
    try {
      // act
      const results = await raceInThreads(path, 4, 8, 'acquire', t0);
      // assert
      const store = openSqliteState({ path });
      assert.equal(results.filter(Boolean).length, 5, `winners: ${JSON.stringify(results)}`);
      assert.equal((await store.leases.holders('migrations/cluster', t0)).length, 5);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a shared connection gets only state_ tables and stays open after close()', async () => {
    // arrange
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE queue_messages (id INTEGER PRIMARY KEY)');
    // act
    const store = openSqliteState({ db });
    await store.expectations.expectCreations('pods', 'ns/vmi', 1, 1000);
    await store.close();
    // assert
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    assert.deepEqual(tables, ['queue_messages', 'state_expectations', 'state_failures', 'state_leases', 'state_traces']);
    assert.equal((db.prepare('SELECT add_n FROM state_expectations').get() as { add_n: number }).add_n, 1, 'the connection is still usable');
    db.close();
  });

  test('records survive reopening the file', async () => {
    // arrange
    const dir = mkdtempSync(join(tmpdir(), 'state-reopen-'));
    const path = join(dir, 'state.db');
    const first = openSqliteState({ path });
    await first.expectations.expectDeletions('pods', 'ns/vmi', ['ns/pod'], 1000);
    await first.failures.increment('vmi', 'ns/vmi', 1000);
    await first.close();
    // act
    const second = openSqliteState({ path });
    // assert
    assert.deepEqual(await second.expectations.get('pods', 'ns/vmi'), { add: 0, del: 1, deleteKeys: ['ns/pod'], setAt: 1000 });
    assert.equal(await second.failures.get('vmi', 'ns/vmi'), 1);
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('sweep deletes only what is past its expiry (plus the grace for expectations)', async () => {
    // arrange
    const store = openSqliteState();
    const t0 = 10_000_000_000;
    await store.expectations.expectCreations('pods', 'ns/old', 1, t0 - EXPECTATIONS_TIMEOUT_MS - GC_GRACE_MS - 1);
    await store.expectations.expectCreations('pods', 'ns/expired-in-grace', 1, t0 - EXPECTATIONS_TIMEOUT_MS - 1);
    await store.failures.increment('vmi', 'ns/idle', t0 - FAILURE_COUNT_TTL_MS - 1);
    await store.failures.increment('vmi', 'ns/recent', t0);
    await store.leases.acquire('c-gone', 'gone', 5, t0 - 2000, 1000); // another counter: an acquire on 'c' would prune it
    await store.leases.acquire('c', 'live', 5, t0, 1000);
    // act
    const removed = store.sweep(t0);
    // assert
    assert.equal(removed, 3);
    assert.equal(await store.expectations.get('pods', 'ns/old'), undefined);
    assert.notEqual(await store.expectations.get('pods', 'ns/expired-in-grace'), undefined);
    assert.equal(await store.failures.get('vmi', 'ns/idle'), 0);
    assert.equal(await store.failures.get('vmi', 'ns/recent'), 1);
    assert.deepEqual(await store.leases.holders('c', t0), ['live']);
    assert.equal((store.db.prepare("SELECT COUNT(*) AS n FROM state_leases WHERE counter = 'c-gone'").get() as { n: number }).n, 0);
    await store.close();
  });

  test('traces: the table never holds more than the per-key bound, and sweep drops expired rows', async () => {
    // arrange
    const store = openSqliteState();
    const t0 = 10_000_000_000;
    const rows = (): number => (store.db.prepare('SELECT COUNT(*) AS n FROM state_traces').get() as { n: number }).n;
    for (let i = 0; i < TRACE_ENTRIES_PER_KEY + 10; i++) await store.traces.record(traceEntry('vmi', 'ns/a', t0 + i), t0 + i);
    await store.traces.record(traceEntry('vmi', 'ns/old', t0 - TRACE_TTL_MS), t0 - TRACE_TTL_MS);
    // act
    const before = rows();
    const removed = store.sweep(t0);
    // assert
    assert.equal(before, TRACE_ENTRIES_PER_KEY + 1, 'pruned on every write, not by the sweep');
    assert.equal(removed, 1);
    assert.equal(rows(), TRACE_ENTRIES_PER_KEY);
    await store.close();
  });
});
