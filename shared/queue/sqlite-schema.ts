/**
 * Tables of the embedded key queue. Every name starts with `queue_` so the queue can share one
 * SQLite database (one `DatabaseSync`) with the state store.
 */
import type { DatabaseSync } from 'node:sqlite';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS queue_items (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  controller       TEXT    NOT NULL,
  key              TEXT    NOT NULL,            -- '' for a malformed body (never coalesced)
  state            TEXT    NOT NULL CHECK (state IN ('waiting', 'inflight')),
  visible_at       INTEGER NOT NULL,            -- waiting: ready at; inflight: lease deadline
  enqueued_at      INTEGER NOT NULL,            -- the oldest coalesced message
  coalesced        INTEGER NOT NULL DEFAULT 1,
  failures         INTEGER NOT NULL DEFAULT 0,  -- consecutive failed attempts of this key
  first_failure_at INTEGER,
  receipt          TEXT
);
-- At most one waiting and one in-flight row per key: the waiting row is where duplicates coalesce,
-- the in-flight row is the per-key lock.
CREATE UNIQUE INDEX IF NOT EXISTS queue_items_key ON queue_items (controller, key, state) WHERE key <> '';
CREATE INDEX IF NOT EXISTS queue_items_ready ON queue_items (controller, state, visible_at, id);
-- FIFO order of a controller's waiting rows: receive walks it from the oldest and stops after a
-- batch, instead of sorting every visible waiting row (the whole backlog) on each receive.
CREATE INDEX IF NOT EXISTS queue_items_fifo ON queue_items (controller, state, id);

-- Each item's message (the newest cause wins; tens of KB with a view), apart from the row that
-- changes on every receive, lease renewal and retry: SQLite rewrites a whole row on any update,
-- and reaches a column stored after a long text only through its overflow pages.
CREATE TABLE IF NOT EXISTS queue_bodies (
  id   INTEGER PRIMARY KEY,                     -- queue_items.id
  body TEXT    NOT NULL
);
CREATE TRIGGER IF NOT EXISTS queue_items_body_gone AFTER DELETE ON queue_items
BEGIN
  DELETE FROM queue_bodies WHERE id = old.id;
END;

CREATE TABLE IF NOT EXISTS queue_dedup (
  controller TEXT    NOT NULL,
  dedup_id   TEXT    NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (controller, dedup_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS queue_dedup_expiry ON queue_dedup (expires_at);

-- requeue-after: one pending timer per key (the earliest wins, as client-go's AddAfter).
CREATE TABLE IF NOT EXISTS queue_timers (
  controller TEXT    NOT NULL,
  key        TEXT    NOT NULL,
  body       TEXT    NOT NULL,
  fire_at    INTEGER NOT NULL,
  PRIMARY KEY (controller, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS queue_timers_due ON queue_timers (controller, fire_at);

CREATE TABLE IF NOT EXISTS queue_dead (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  controller       TEXT    NOT NULL,
  key              TEXT    NOT NULL,
  body             TEXT    NOT NULL,
  reason           TEXT    NOT NULL,
  message          TEXT    NOT NULL,
  attempts         INTEGER NOT NULL,
  first_failure_at INTEGER NOT NULL,
  last_failure_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS queue_dead_key ON queue_dead (controller, key) WHERE key <> '';
`;

/** Creates the queue tables if they are missing (idempotent), moving an older file's bodies to their table. */
export function ensureQueueSchema(db: DatabaseSync): void {
  const columns = db.prepare('PRAGMA table_info(queue_items)').all() as unknown as { name: string }[];
  if (columns.some((c) => c.name === 'body')) {
    // A file from before queue_bodies: its items keep their ids, their bodies move.
    inWriteTransaction(db, () => {
      db.exec('CREATE TABLE IF NOT EXISTS queue_bodies (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      db.exec('INSERT INTO queue_bodies (id, body) SELECT id, body FROM queue_items');
      db.exec('ALTER TABLE queue_items DROP COLUMN body');
    });
  }
  db.exec(SCHEMA);
}

/**
 * Runs `fn` in a write transaction. `BEGIN IMMEDIATE` takes the write lock up front so two
 * processes on one file never deadlock upgrading a read lock; when the caller (e.g. the state
 * store sharing this connection) already has a transaction open, a savepoint nests inside it.
 */
export function inWriteTransaction<T>(db: DatabaseSync, fn: () => T): T {
  const nested = db.isTransaction;
  db.exec(nested ? 'SAVEPOINT queue_tx' : 'BEGIN IMMEDIATE');
  try {
    const out = fn();
    db.exec(nested ? 'RELEASE queue_tx' : 'COMMIT');
    return out;
  } catch (err) {
    db.exec(nested ? 'ROLLBACK TO queue_tx; RELEASE queue_tx' : 'ROLLBACK');
    throw err;
  }
}
