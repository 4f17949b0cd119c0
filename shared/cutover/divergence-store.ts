/**
 * Shadow mode's divergences, kept where `virt-reconciler divergences` and the dashboard read them
 * from another process: the local runtime's SQLite database (beside the queue and the table), or
 * on AWS the state table (items `pk = shadowdiv`, `sk = <id>`; the relay judges and writes them,
 * shadow-channel.ts). The same divergence seen again (same controller, key, write, object and
 * differing paths) is one row whose count and last time grow.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, ttlSeconds } from '../state/dynamodb-table.ts';
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
    const id = divergenceId(d);
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

/** One row per controller, key, write, object and set of differing paths. */
function divergenceId(d: Divergence): string {
  const paths = d.fields.map((f) => f.path).sort().join(',');
  return [d.controller, d.key, d.write, d.object, paths].join('|');
}

/** The state table's partition of divergences. */
export const DIVERGENCE_PK = 'shadowdiv';
/** How long a divergence stays in the state table after it was last seen: a shadow period's reading time. */
const DIVERGENCE_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** DynamoDB's item limit is 400 KB; the differing fields are cut to fit well inside it. */
const MAX_FIELDS_BYTES = 300 * 1024;

/** The divergences in the state table (AWS): written by the relay, read by the CLI. */
export class DynamoDbDivergences implements DivergenceSink {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = tableName;
  }

  async add(d: Divergence): Promise<void> {
    let fields = JSON.stringify(d.fields);
    if (Buffer.byteLength(fields) > MAX_FIELDS_BYTES) fields = JSON.stringify(d.fields.map((f) => ({ path: f.path, ours: '(too large to keep)', live: '(too large to keep)' })));
    await call('UpdateItem', () =>
      this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: DIVERGENCE_PK, sk: divergenceId(d) },
          UpdateExpression: 'SET #c = :c, #k = :k, #w = :w, #o = :o, #f = :f, #first = if_not_exists(#first, :at), #last = :at, #ttl = :ttl ADD #n :one',
          ExpressionAttributeNames: { '#c': 'controller', '#k': 'key', '#w': 'write', '#o': 'object', '#f': 'fields', '#first': 'firstAt', '#last': 'lastAt', '#ttl': 'ttl', '#n': 'count' },
          ExpressionAttributeValues: { ':c': d.controller, ':k': d.key, ':w': d.write, ':o': d.object, ':f': fields, ':at': d.at, ':ttl': ttlSeconds(d.at + DIVERGENCE_TTL_MS), ':one': 1 },
        }),
      ),
    );
  }

  /** Oldest first; one controller's with `controller`. */
  async list(filter: { controller?: string | undefined } = {}): Promise<StoredDivergence[]> {
    const out: StoredDivergence[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await call('Query', () =>
        this.#doc.send(new QueryCommand({ TableName: this.#table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': DIVERGENCE_PK }, ...(start ? { ExclusiveStartKey: start } : {}) })),
      );
      for (const i of (page.Items ?? []) as DynamoRow[]) {
        if (filter.controller !== undefined && i.controller !== filter.controller) continue;
        out.push({ at: i.firstAt, lastAt: i.lastAt, count: i.count, controller: i.controller, key: i.key, write: i.write, object: i.object, fields: JSON.parse(i.fields) as FieldDiff[] });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return out.sort((a, b) => a.at - b.at || (a.controller + a.key).localeCompare(b.controller + b.key));
  }
}

interface DynamoRow {
  controller: string;
  key: string;
  write: string;
  object: string;
  fields: string;
  firstAt: number;
  lastAt: number;
  count: number;
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
