import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { InvalidInputError } from '../../shared/errors.ts';
import { backoffMs, DEFAULT_RETRY } from '../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { keyMessage, queueConformance, type HarnessOptions, type QueueHarness } from './conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-queue-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A file-backed queue with a fake clock: backoff and timers are tested without waiting. */
async function harness(opts: HarnessOptions): Promise<QueueHarness> {
  const file = join(dir, `q${n++}.db`);
  let now = 1_700_000_000_000;
  const open = (): SqliteKeyQueue => new SqliteKeyQueue({ db: file, clock: () => now, ...opts });
  let queue = open();
  const h: QueueHarness = {
    get queue() {
      return queue;
    },
    sendRaw: (controller, body) => queue.sendRaw(controller, body),
    advance: async (ms) => {
      now += ms;
    },
    skew: async (ms) => {
      now += ms;
    },
    now: () => now,
    reopen: async () => {
      await queue.close();
      queue = open();
      return queue;
    },
    caps: { coalescesWaiting: true, ageOfVisible: true },
    close: () => queue.close(),
  };
  return h;
}

queueConformance('sqlite (file)', harness);

describe('SqliteKeyQueue specifics', () => {
  test('shares an open database with other tables, and only adds queue_… tables', async () => {
    // arrange: a database the state store already uses
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE state_things (k TEXT PRIMARY KEY)');
    const q = new SqliteKeyQueue({ db });
    // act
    await q.send([keyMessage('ns/a', 1)]);
    const got = await q.receive('vmi', 1, 0);
    await q.close();
    // assert
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[])
      .map((r) => r.name);
    assert.ok(tables.every((t) => t === 'state_things' || t.startsWith('queue_')), `unexpected tables: ${tables.join(',')}`);
    assert.equal(got.length, 1);
    assert.equal(db.isOpen, true, 'closing the queue must not close a database it did not open');
    db.close();
  });

  test('a file from before the bodies had their own table opens with its waiting keys intact', async () => {
    // arrange: queue_items as it was, the body a column of the item
    const file = join(dir, `old-${n++}.db`);
    const old = new DatabaseSync(file);
    old.exec(`CREATE TABLE queue_items (id INTEGER PRIMARY KEY AUTOINCREMENT, controller TEXT NOT NULL, key TEXT NOT NULL,
      body TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('waiting', 'inflight')), visible_at INTEGER NOT NULL,
      enqueued_at INTEGER NOT NULL, coalesced INTEGER NOT NULL DEFAULT 1, failures INTEGER NOT NULL DEFAULT 0,
      first_failure_at INTEGER, receipt TEXT)`);
    old.prepare(`INSERT INTO queue_items (controller, key, body, state, visible_at, enqueued_at) VALUES ('vmi', 'ns/a', ?, 'waiting', 0, 0)`)
      .run(JSON.stringify(keyMessage('ns/a', 7)));
    old.close();
    // act
    const q = new SqliteKeyQueue({ db: file });
    await q.send([keyMessage('ns/b', 8)]);
    const got = await q.receive('vmi', 10, 0);
    for (const rk of got) await q.ack('vmi', rk.receipt);
    const depth = await q.depth('vmi');
    await q.close();
    // assert
    assert.deepEqual(got.map((rk) => [rk.message.key, rk.message.cause.resourceVersion]), [['ns/a', '7'], ['ns/b', '8']]);
    assert.equal(depth.visible + depth.inFlight, 0);
    const db = new DatabaseSync(file);
    const columns = (db.prepare('PRAGMA table_info(queue_items)').all() as { name: string }[]).map((c) => c.name);
    const bodies = db.prepare('SELECT count(*) AS n FROM queue_bodies').get() as { n: number };
    db.close();
    assert.ok(!columns.includes('body'), 'the body left the item row');
    assert.equal(bodies.n, 0, 'an acknowledged item takes its body with it');
  });

  test('two connections on one file (two processes) never deliver a key twice', async () => {
    // arrange
    const file = join(dir, `shared${n++}.db`);
    const a = new SqliteKeyQueue({ db: file });
    const b = new SqliteKeyQueue({ db: file });
    await a.send(['ns/k1', 'ns/k2', 'ns/k3'].map((k) => keyMessage(k, 1)));
    // act
    const [fromA, fromB] = await Promise.all([a.receive('vmi', 2, 0), b.receive('vmi', 10, 0)]);
    await Promise.all([a.close(), b.close()]);
    // assert
    const keys = [...fromA, ...fromB].map((rk) => rk.message.key).sort();
    assert.deepEqual(keys, ['ns/k1', 'ns/k2', 'ns/k3'], 'each key exactly once across both connections');
  });

  test('rejects an invalid message at send, naming the field', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const bad = { ...keyMessage('ns/a', 1), key: 'no-slash' };
    // act + assert
    await assert.rejects(q.send([bad]), (err: Error) => err instanceof InvalidInputError && err.field === 'key');
    assert.equal((await q.depth('vmi')).visible, 0, 'nothing of the rejected batch may be stored');
    await q.close();
  });

  test('an idle receiver takes no write lock: another process holding it does not stall or fail an empty receive', async () => {
    // arrange
    const file = join(dir, `q${n++}.db`);
    const q = new SqliteKeyQueue({ db: file });
    const other = new DatabaseSync(file);
    other.exec('BEGIN IMMEDIATE');
    try {
      // act: an empty queue, polled while the other connection writes (the CLI's replay, a second process)
      const got = await q.receive('vmi', 1, 20);
      // assert
      assert.deepEqual(got, []);
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await q.close();
    }
  });

  test('a long receive ends with nothing when its stop signal is aborted', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    const stop = new AbortController();
    // act
    const pending = q.receive('vmi', 1, 600_000, stop.signal);
    stop.abort();
    const got = await pending;
    await q.close();
    // assert
    assert.deepEqual(got, []);
  });

  test('a long receive wakes up when a key is sent', async () => {
    // arrange
    const q = new SqliteKeyQueue({ db: ':memory:' });
    // act
    const pending = q.receive('vmi', 1, 10_000);
    await q.send([keyMessage('ns/a', 1)]);
    const got = await pending;
    await q.close();
    // assert
    assert.equal(got[0]?.message.key, 'ns/a');
  });
});

describe('backoffMs (client-go per-item exponential limiter)', () => {
  const table: [attempt: number, ms: number][] = [[1, 5], [2, 10], [3, 20], [10, 2560], [18, 655_360], [19, 1_000_000], [40, 1_000_000]];
  for (const [attempt, ms] of table) {
    test(`after ${attempt} failure(s): ${ms} ms`, () => {
      assert.equal(backoffMs(DEFAULT_RETRY, attempt), ms);
    });
  }
});
