/**
 * Shadow mode's divergences, kept in the runtime's SQLite database (beside the queue and the
 * table) so that `virt-reconciler divergences` and the dashboard read them from another process.
 * The same divergence seen again (same controller, key, write, object and differing paths) is one
 * row whose count and last time grow.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { FieldDiff } from './decision.ts';
import type { Divergence, DivergenceSink } from './shadow-recorder.ts';

/** A stored divergence. */
export interface StoredDivergence extends Divergence {
  readonly count: number;
  readonly lastAt: number;
}

export class SqliteDivergences implements DivergenceSink {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS shadow_divergences (
      id TEXT PRIMARY KEY, controller TEXT NOT NULL, key TEXT NOT NULL, write TEXT NOT NULL, object TEXT NOT NULL,
      fields TEXT NOT NULL, first_at INTEGER NOT NULL, last_at INTEGER NOT NULL, count INTEGER NOT NULL)`);
  }

  add(d: Divergence): void {
    const paths = d.fields.map((f) => f.path).sort().join(',');
    const id = [d.controller, d.key, d.write, d.object, paths].join('|');
    this.#db
      .prepare(
        `INSERT INTO shadow_divergences (id, controller, key, write, object, fields, first_at, last_at, count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
         ON CONFLICT(id) DO UPDATE SET count = count + 1, last_at = excluded.last_at, fields = excluded.fields`,
      )
      .run(id, d.controller, d.key, d.write, d.object, JSON.stringify(d.fields), d.at, d.at);
  }

  /** Oldest first; one controller's with `controller`. */
  list(filter: { controller?: string | undefined } = {}): StoredDivergence[] {
    const rows = (filter.controller
      ? this.#db.prepare('SELECT * FROM shadow_divergences WHERE controller = ? ORDER BY first_at, id').all(filter.controller)
      : this.#db.prepare('SELECT * FROM shadow_divergences ORDER BY first_at, id').all()) as unknown as Row[];
    return rows.map((r) => ({ at: r.first_at, lastAt: r.last_at, count: r.count, controller: r.controller, key: r.key, write: r.write, object: r.object, fields: JSON.parse(r.fields) as FieldDiff[] }));
  }

  clear(): void {
    this.#db.exec('DELETE FROM shadow_divergences');
  }
}

interface Row {
  controller: string;
  key: string;
  write: string;
  object: string;
  fields: string;
  first_at: number;
  last_at: number;
  count: number;
}
