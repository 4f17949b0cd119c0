/**
 * Traces on the embedded SQLite table (`state_traces`, next to the other `state_` tables): one
 * row per reconcile, the entry as JSON. Recording (one entry, or a batch's) is one `BEGIN IMMEDIATE`
 * transaction (the inserts and the pruning of what falls past the per-key bound), so the table never holds more
 * than {@link TRACE_ENTRIES_PER_KEY} rows for a key; `sweep` drops rows past their TTL.
 */
import type { DatabaseSync } from 'node:sqlite';
import { TRACE_ENTRIES_PER_KEY, TRACE_TTL_MS, traceLimit, type TraceEntry, type Traces } from './traces.ts';
import { requireName, requireTime } from './validate.ts';

export const TRACES_SCHEMA = `
CREATE TABLE IF NOT EXISTS state_traces (
  id INTEGER PRIMARY KEY,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS state_traces_by_key ON state_traces (scope, key, id);
CREATE INDEX IF NOT EXISTS state_traces_by_expiry ON state_traces (expires_at);
`;

/** The Traces port over `db` (whose schema includes {@link TRACES_SCHEMA}). */
export function sqliteTraces(db: DatabaseSync, immediate: <T>(fn: () => T) => T): Traces {
  const insert = db.prepare('INSERT INTO state_traces (scope, key, at, expires_at, entry) VALUES (?, ?, ?, ?, ?)');
  // Rows are numbered in insertion order, and one key is never reconciled twice at once, so the
  // newest N ids of a key are its last N reconciles.
  const prune = db.prepare(`
    DELETE FROM state_traces WHERE scope = :scope AND key = :key AND id <= (
      SELECT id FROM state_traces WHERE scope = :scope AND key = :key ORDER BY id DESC LIMIT 1 OFFSET :keep)`);
  const newest = db.prepare('SELECT entry FROM state_traces WHERE scope = ? AND key = ? AND expires_at > ? ORDER BY id DESC LIMIT ?');
  const recordBatch: Traces['recordBatch'] = async (entries, now) => {
    for (const entry of entries) {
      requireName('controller', entry.controller);
      requireName('key', entry.key);
    }
    requireTime('now', now);
    if (entries.length === 0) return;
    immediate(() => {
      // In the order reconciled, so that row ids stay each key's order.
      for (const entry of [...entries].sort((a, b) => a.receivedAt - b.receivedAt)) insert.run(entry.controller, entry.key, entry.receivedAt, now + TRACE_TTL_MS, JSON.stringify(entry));
      const keys = new Map(entries.map((e) => [`${e.controller}\u0000${e.key}`, e]));
      for (const e of keys.values()) prune.run({ scope: e.controller, key: e.key, keep: TRACE_ENTRIES_PER_KEY });
    });
  };
  return {
    record: (entry, now) => recordBatch([entry], now),
    recordBatch,
    async recent(controller, key, now, limit) {
      requireName('controller', controller);
      requireName('key', key);
      const rows = newest.all(controller, key, now, traceLimit(limit)) as { entry: string }[];
      return rows.map((r) => JSON.parse(r.entry) as TraceEntry).reverse();
    },
  };
}

/** Deletes trace rows past their TTL at `now`; returns how many went. */
export function sweepTraces(db: DatabaseSync, now: number): number {
  return Number(db.prepare('DELETE FROM state_traces WHERE expires_at <= ?').run(now).changes);
}
