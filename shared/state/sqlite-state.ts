/**
 * The embedded StateStore over Node's built-in `node:sqlite` (docs/architecture.md §1, local runtime).
 *
 * Tables are prefixed `state_` so the embedded queue may share the same database file. Every
 * mutation is one statement or one `BEGIN IMMEDIATE` transaction, so concurrent async callers,
 * several connections and several processes/threads on one file all see atomic updates (WAL
 * lets readers proceed while one writer holds the lock; `busy_timeout` makes writers wait).
 * See docs/state.md for the schema and semantics.
 */
import { DatabaseSync } from 'node:sqlite';
import {
  EXPECTATIONS_TIMEOUT_MS,
  FAILURE_COUNT_TTL_MS,
  isExpectationSatisfied,
  type ExpectationRecord,
  type Expectations,
  type FailureCounts,
  type Leases,
  type StateStore,
} from './port.ts';
import { sqliteTraces, sweepTraces, TRACES_SCHEMA } from './sqlite-traces.ts';
import { GC_GRACE_MS, requireCount, requireName, requireTime, uniqueKeys } from './validate.ts';

export interface SqliteStateOptions {
  /** A database file, or `:memory:`. Ignored when `db` is given. */
  readonly path?: string;
  /** An open connection to share (e.g. with the embedded queue); `close()` leaves it open. */
  readonly db?: DatabaseSync;
  /** How long a writer waits for the lock held by another connection, ms (default 5000). */
  readonly busyTimeoutMs?: number;
}

/** The SQLite StateStore, plus housekeeping the local runtime may call. */
export interface SqliteStateStore extends StateStore {
  /** The connection in use (to share with the embedded queue). */
  readonly db: DatabaseSync;
  /** Deletes records expired for longer than the GC grace at `now`; returns how many went. */
  sweep(now: number): number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS state_expectations (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  add_n INTEGER NOT NULL,
  del_n INTEGER NOT NULL,
  delete_keys TEXT NOT NULL DEFAULT '[]', -- JSON array of distinct strings
  set_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_failures (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  count INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS state_leases (
  counter TEXT NOT NULL,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (counter, holder)
) WITHOUT ROWID;
`;

/** Opens (and creates the tables of) the SQLite StateStore. */
export function openSqliteState(options: SqliteStateOptions = {}): SqliteStateStore {
  const owned = options.db === undefined;
  const db = options.db ?? new DatabaseSync(options.path ?? ':memory:');
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
  if (owned && options.path !== undefined && options.path !== ':memory:') {
    db.exec('PRAGMA journal_mode = WAL');
    // NORMAL in WAL mode survives a process crash (not a power loss): enough for a local runtime.
    db.exec('PRAGMA synchronous = NORMAL');
  }
  immediate(db, () => db.exec(SCHEMA + TRACES_SCHEMA));
  let closed = false;
  return {
    db,
    expectations: sqliteExpectations(db),
    failures: sqliteFailures(db),
    leases: sqliteLeases(db),
    traces: sqliteTraces(db, (fn) => immediate(db, fn)),
    sweep: (now) => sweep(db, now),
    close: async () => {
      if (owned && !closed) db.close();
      closed = true;
    },
  };
}

/**
 * Runs `fn` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so a
 * read-then-write can never be overtaken by another connection between its read and its write.
 * `fn` must be synchronous (an `await` inside would let other callers' statements join the
 * transaction on this shared connection).
 */
function immediate<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

interface ExpectationRow {
  add_n: number;
  del_n: number;
  delete_keys: string;
  set_at: number;
}

function sqliteExpectations(db: DatabaseSync): Expectations {
  // Upsert of the counters that leaves delete_keys alone (KubeVirt's UID set is a separate store).
  const setCounters = db.prepare(`
    INSERT INTO state_expectations (scope, key, add_n, del_n, set_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (scope, key) DO UPDATE SET add_n = excluded.add_n, del_n = excluded.del_n, set_at = excluded.set_at`);
  const setDeletions = db.prepare(`
    INSERT INTO state_expectations (scope, key, add_n, del_n, delete_keys, set_at) VALUES (?, ?, 0, ?, ?, ?)
    ON CONFLICT (scope, key) DO UPDATE SET add_n = 0, del_n = excluded.del_n,
      delete_keys = excluded.delete_keys, set_at = excluded.set_at`);
  // Takes the record only when absent, expired (set_at older than the cut) or satisfied.
  const trySet = db.prepare(`
    INSERT INTO state_expectations (scope, key, add_n, del_n, set_at) VALUES (?, ?, ?, 0, ?)
    ON CONFLICT (scope, key) DO UPDATE SET add_n = excluded.add_n, del_n = 0, set_at = excluded.set_at
    WHERE state_expectations.set_at < ? OR (state_expectations.add_n <= 0 AND state_expectations.del_n <= 0)`);
  // The same, only while the record is the one the caller saw: none (an expired one excepted), or
  // the one set at :seen.
  const trySetIfNone = db.prepare(`
    INSERT INTO state_expectations (scope, key, add_n, del_n, set_at) VALUES (?, ?, ?, 0, ?)
    ON CONFLICT (scope, key) DO UPDATE SET add_n = excluded.add_n, del_n = 0, set_at = excluded.set_at
    WHERE state_expectations.set_at < ?`);
  const trySetIfSame = db.prepare(`
    INSERT INTO state_expectations (scope, key, add_n, del_n, set_at) VALUES (?, ?, ?, 0, ?)
    ON CONFLICT (scope, key) DO UPDATE SET add_n = excluded.add_n, del_n = 0, set_at = excluded.set_at
    WHERE state_expectations.set_at = ? AND (state_expectations.set_at < ? OR (state_expectations.add_n <= 0 AND state_expectations.del_n <= 0))`);
  const lowerAdd = db.prepare('UPDATE state_expectations SET add_n = add_n - 1 WHERE scope = ? AND key = ?');
  // One statement: decrement and drop the key only when it is in the set, so a pod seen deleted
  // twice (graceful-deletion update, then the final delete) counts once.
  const lowerDel = db.prepare(`
    UPDATE state_expectations SET del_n = del_n - 1,
      delete_keys = (SELECT json_group_array(value) FROM json_each(delete_keys) WHERE value <> :dk)
    WHERE scope = :scope AND key = :key AND EXISTS (SELECT 1 FROM json_each(delete_keys) WHERE value = :dk)`);
  const select = db.prepare('SELECT add_n, del_n, delete_keys, set_at FROM state_expectations WHERE scope = ? AND key = ?');
  const remove = db.prepare('DELETE FROM state_expectations WHERE scope = ? AND key = ?');
  const pending = db.prepare('SELECT COALESCE(SUM(add_n), 0) AS total FROM state_expectations WHERE scope = ? AND set_at >= ?');

  const read = (scope: string, key: string): ExpectationRecord | undefined => {
    const row = select.get(scope, key) as ExpectationRow | undefined;
    if (!row) return undefined;
    return { add: row.add_n, del: row.del_n, deleteKeys: JSON.parse(row.delete_keys) as string[], setAt: row.set_at };
  };
  const check = (scope: string, key: string): void => {
    requireName('scope', scope);
    requireName('key', key);
  };

  return {
    async expectCreations(scope, key, n, now) {
      check(scope, key);
      requireCount('n', n);
      requireTime('now', now);
      setCounters.run(scope, key, n, 0, now);
    },
    async expectDeletions(scope, key, deleteKeys, now) {
      check(scope, key);
      requireTime('now', now);
      const keys = uniqueKeys(deleteKeys);
      setDeletions.run(scope, key, keys.length, JSON.stringify(keys), now);
    },
    async setExpectations(scope, key, add, del, now) {
      check(scope, key);
      requireCount('add', add);
      requireCount('del', del);
      requireTime('now', now);
      setCounters.run(scope, key, add, del, now);
    },
    async creationObserved(scope, key) {
      check(scope, key);
      lowerAdd.run(scope, key);
    },
    async deletionObserved(scope, key, deleteKey) {
      check(scope, key);
      requireName('deleteKey', deleteKey);
      lowerDel.run({ scope, key, dk: deleteKey });
    },
    async satisfied(scope, key, now) {
      check(scope, key);
      const record = read(scope, key);
      return isExpectationSatisfied(record, now);
    },
    async get(scope, key) {
      check(scope, key);
      return read(scope, key);
    },
    async delete(scope, key) {
      check(scope, key);
      remove.run(scope, key);
    },
    async pendingCreations(scope, now) {
      requireName('scope', scope);
      const row = pending.get(scope, now - EXPECTATIONS_TIMEOUT_MS) as { total: number };
      return row.total;
    },
    async tryExpectCreations(scope, key, n, now, seen) {
      check(scope, key);
      requireCount('n', n);
      requireTime('now', now);
      const cut = now - EXPECTATIONS_TIMEOUT_MS;
      if (seen === undefined) return Number(trySet.run(scope, key, n, now, cut).changes) === 1;
      if (seen === null) return Number(trySetIfNone.run(scope, key, n, now, cut).changes) === 1;
      requireTime('seen.setAt', seen.setAt);
      return Number(trySetIfSame.run(scope, key, n, now, seen.setAt, cut).changes) === 1;
    },
  };
}

function sqliteFailures(db: DatabaseSync): FailureCounts {
  // An idle count (older than the TTL) restarts at 1 rather than resuming.
  const increment = db.prepare(`
    INSERT INTO state_failures (scope, key, count, updated_at) VALUES (:scope, :key, 1, :now)
    ON CONFLICT (scope, key) DO UPDATE SET
      count = CASE WHEN state_failures.updated_at < :cut THEN 1 ELSE state_failures.count + 1 END,
      updated_at = :now
    RETURNING count`);
  const select = db.prepare('SELECT count, updated_at FROM state_failures WHERE scope = ? AND key = ?');
  const remove = db.prepare('DELETE FROM state_failures WHERE scope = ? AND key = ?');
  return {
    async increment(scope, key, now) {
      requireName('scope', scope);
      requireName('key', key);
      requireTime('now', now);
      const row = increment.get({ scope, key, now, cut: now - FAILURE_COUNT_TTL_MS }) as { count: number };
      return row.count;
    },
    async get(scope, key, now) {
      requireName('scope', scope);
      requireName('key', key);
      const row = select.get(scope, key) as { count: number; updated_at: number } | undefined;
      if (!row) return 0;
      if (now !== undefined && row.updated_at < now - FAILURE_COUNT_TTL_MS) return 0;
      return row.count;
    },
    async reset(scope, key) {
      requireName('scope', scope);
      requireName('key', key);
      remove.run(scope, key);
    },
  };
}

function sqliteLeases(db: DatabaseSync): Leases {
  const prune = db.prepare('DELETE FROM state_leases WHERE counter = ? AND expires_at <= ?');
  const refresh = db.prepare('UPDATE state_leases SET expires_at = ? WHERE counter = ? AND holder = ?');
  const count = db.prepare('SELECT COUNT(*) AS n FROM state_leases WHERE counter = ?');
  const insert = db.prepare('INSERT INTO state_leases (counter, holder, expires_at) VALUES (?, ?, ?)');
  const remove = db.prepare('DELETE FROM state_leases WHERE counter = ? AND holder = ?');
  const live = db.prepare('SELECT holder FROM state_leases WHERE counter = ? AND expires_at > ? ORDER BY holder');
  return {
    async acquire(counter, holder, limit, now, ttlMs) {
      requireName('counter', counter);
      requireName('holder', holder);
      requireCount('limit', limit);
      requireTime('now', now);
      requireTime('ttlMs', ttlMs);
      return immediate(db, () => {
        // Expired holders go first: a crashed holder must not keep its slot.
        prune.run(counter, now);
        if (Number(refresh.run(now + ttlMs, counter, holder).changes) === 1) return true;
        if ((count.get(counter) as { n: number }).n >= limit) return false;
        insert.run(counter, holder, now + ttlMs);
        return true;
      });
    },
    async release(counter, holder) {
      requireName('counter', counter);
      requireName('holder', holder);
      remove.run(counter, holder);
    },
    async holders(counter, now) {
      requireName('counter', counter);
      return (live.all(counter, now) as { holder: string }[]).map((r) => r.holder);
    },
  };
}

function sweep(db: DatabaseSync, now: number): number {
  return immediate(db, () => {
    const a = db.prepare('DELETE FROM state_expectations WHERE set_at < ?').run(now - EXPECTATIONS_TIMEOUT_MS - GC_GRACE_MS);
    const b = db.prepare('DELETE FROM state_failures WHERE updated_at < ?').run(now - FAILURE_COUNT_TTL_MS);
    const c = db.prepare('DELETE FROM state_leases WHERE expires_at <= ?').run(now);
    return Number(a.changes) + Number(b.changes) + Number(c.changes) + sweepTraces(db, now);
  });
}
