/**
 * The embedded key queue (docs/architecture.md §2) over Node's built-in `node:sqlite`: durable in a WAL file
 * (or `:memory:`), several consumers per process, per-key serialization, coalescing, dedup,
 * client-go backoff, durable requeue-after timers and a dead-letter table.
 *
 * Model: per controller+key at most one `waiting` row (where new events coalesce, newest cause
 * wins, with the freshest view) and at most one `inflight` row (the per-key lock, leased until a visibility deadline, so
 * a consumer that dies without settling loses its lease and the key is delivered again).
 */
import { randomBytes } from 'node:crypto';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ReconcilerError } from '../errors.ts';
import { coalesceBodies } from './coalesce.ts';
import { wakeDelayMs } from '../controllers.ts';
import { checkKeyMessage, dedupId, parseKeyMessage, type Controller, type KeyMessage } from './message.ts';
import {
  backoffMs,
  DEFAULT_RETRY,
  type DeadLetter,
  type KeyQueue,
  type QueueDepth,
  type ReceivedKey,
  type ReplayFilter,
  type ReplayReport,
  retriesExhausted,
  type RetryPolicy,
} from './port.ts';
import { recause } from './recause.ts';
import { ensureQueueSchema, inWriteTransaction } from './sqlite-schema.ts';

export interface SqliteKeyQueueOptions {
  /** A file path, `:memory:`, or an open database shared with the state store. */
  readonly db: string | DatabaseSync;
  readonly retry?: RetryPolicy;
  /** Lease of a received key; after it the key is delivered again (consumer presumed dead). */
  readonly visibilityTimeoutMs?: number;
  /** How long an exact duplicate (same dedupId) is dropped. SQS: 5 minutes. */
  readonly dedupWindowMs?: number;
  /** Epoch-ms clock; tests pass a fake one. Waiting in `receive` still uses wall time. */
  readonly clock?: () => number;
}

/** A queue_items row with its body (queue_bodies). */
interface ItemRow {
  id: number;
  key: string;
  body: string;
  visible_at: number;
  enqueued_at: number;
  coalesced: number;
  failures: number;
  first_failure_at: number | null;
  receipt: string | null;
}

interface DeadRow {
  id: number;
  controller: Controller;
  key: string;
  body: string;
  reason: string;
  message: string;
  attempts: number;
  first_failure_at: number;
  last_failure_at: number;
}

/**
 * Longest sleep of an idle receiver. In-process senders wake receivers at once, and a receiver
 * sleeps only until the next due time it knows of (a retry's backoff, a timer, a lease expiry);
 * this cap bounds how late it sees work written by another process (e.g. `replay` from the CLI).
 */
const MAX_IDLE_MS = 1000;

/** {@link KeyQueue} over SQLite. */
export class SqliteKeyQueue implements KeyQueue {
  readonly retry: RetryPolicy;
  private readonly db: DatabaseSync;
  private readonly ownsDb: boolean;
  private readonly visibilityMs: number;
  private readonly dedupMs: number;
  private readonly now: () => number;
  /** Sleeping in-process receivers, per controller: woken when work for them appears. */
  private readonly wakers = new Map<Controller, Set<() => void>>();
  private readonly statements = new Map<string, StatementSync>();
  private closed = false;
  /**
   * A receipt's token: random per queue object, then a counter — unique across the processes that
   * share a file, and no `randomBytes` call per received key (0.6 % of the system process's CPU at 10,000 VMIs).
   */
  private readonly receiptPrefix = randomBytes(9).toString('base64url');
  private receipts = 0;

  constructor(opts: SqliteKeyQueueOptions) {
    this.retry = opts.retry ?? DEFAULT_RETRY;
    this.visibilityMs = opts.visibilityTimeoutMs ?? 5 * 60_000;
    this.dedupMs = opts.dedupWindowMs ?? 5 * 60_000;
    this.now = opts.clock ?? Date.now;
    if (typeof opts.db === 'string') {
      this.db = new DatabaseSync(opts.db);
      this.ownsDb = true;
      // WAL: readers never block the writer; NORMAL survives a process crash (not power loss),
      // enough for the embedded mode. busy_timeout: another process may hold the write lock.
      this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    } else {
      this.db = opts.db;
      this.ownsDb = false;
    }
    ensureQueueSchema(this.db);
    // What a message joining a key's waiting row leaves there (shared/queue/coalesce.ts).
    this.db.function('vr_coalesce_body', { deterministic: true }, (older, newer) => coalesceBodies(String(older), String(newer)));
  }

  async send(messages: readonly KeyMessage[]): Promise<void> {
    // Validate at the edge: a sender bug is reported to the sender, not stored. A message with a
    // view is tens of KB: checked as it is and serialized once, never parsed back.
    const checked = messages.map((m) => ({ m: checkKeyMessage(m), body: JSON.stringify(m) }));
    const now = this.now();
    const added = new Map<Controller, number>();
    inWriteTransaction(this.db, () => {
      this.sql('DELETE FROM queue_dedup WHERE expires_at <= ?').run(now);
      const claim = this.sql(
        `INSERT INTO queue_dedup (controller, dedup_id, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (controller, dedup_id) DO NOTHING`,
      );
      for (const { m, body } of checked) {
        if (claim.run(m.controller, dedupId(m), now + this.dedupMs).changes === 0) continue; // exact duplicate
        this.enqueue(m.controller, m.key, body, now, wakeDelayMs(m.controller));
        added.set(m.controller, (added.get(m.controller) ?? 0) + 1);
      }
    });
    // One receiver per new key: waking every receiver on every send is a thundering herd.
    for (const [controller, n] of added) this.wake(controller, n);
  }

  /**
   * Stores a raw body as it came (no validation, no dedup): how a malformed message can reach
   * this queue (another writer, a corrupted file). `receive` dead-letters it.
   */
  async sendRaw(controller: Controller, body: string): Promise<void> {
    let key = '';
    try {
      key = parseKeyMessage(body).key;
    } catch {
      // malformed: its own row, never coalesced with a real key
    }
    inWriteTransaction(this.db, () => this.enqueue(controller, key, body, this.now()));
    this.wake(controller, 1);
  }

  async receive(controller: Controller, max: number, waitMs: number, stop?: AbortSignal): Promise<ReceivedKey[]> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (stop?.aborted) return [];
      // An idle receiver looks first, without a write transaction: 53 idle workers polling
      // through BEGIN IMMEDIATE … COMMIT cost 30–40 ms of CPU a second (docs/queue.md).
      const got = this.anythingDue(controller) ? inWriteTransaction(this.db, () => this.claim(controller, max, this.now())) : [];
      if (got.length > 0 || this.closed || Date.now() >= deadline) return got;
      await this.sleep(controller, Math.min(this.untilDue(controller), deadline - Date.now()), stop);
    }
  }

  get leaseMs(): number {
    return this.visibilityMs;
  }

  async extendLease(_controller: Controller, receipt: string): Promise<boolean> {
    const { id, token } = parseReceipt(receipt);
    // Held while the row is still in flight under this receipt: a lease that ran out but that no
    // receiver has taken over yet is renewed (as SQS renews a handle not yet received again),
    // which spares a beat delayed by a stalled event loop; once taken over, the receipt is stale.
    const changed = this.sql(`UPDATE queue_items SET visible_at = ? WHERE id = ? AND receipt = ? AND state = 'inflight'`)
      .run(this.now() + this.visibilityMs, id, token).changes;
    return Number(changed) === 1;
  }

  async ack(controller: Controller, receipt: string): Promise<void> {
    const { id, token } = parseReceipt(receipt);
    // A stale receipt (lease expired, key handed to someone else) matches nothing: a no-op.
    this.sql(`DELETE FROM queue_items WHERE id = ? AND receipt = ? AND state = 'inflight'`).run(id, token);
    // Newer events for this key may have been waiting behind it.
    this.wake(controller, 1);
  }

  async retryLater(
    controller: Controller,
    receipt: string,
    failure: { reason: string; message: string },
  ): Promise<{ deadLettered: boolean; delayMs: number }> {
    const out = inWriteTransaction(this.db, () => {
      const row = this.inflight(receipt);
      if (row === undefined) return { deadLettered: false, delayMs: 0 };
      const now = this.now();
      const failures = row.failures + 1;
      const firstFailureAt = row.first_failure_at ?? now;
      // Past the count alone a key keeps retrying at the capped backoff: only a run of failures
      // that also lasted the policy's window is given up (an outage must not dead-letter it).
      if (retriesExhausted(this.retry, failures, firstFailureAt, now)) {
        this.bury(controller, row, failure, failures, now);
        return { deadLettered: true, delayMs: 0 };
      }
      const delayMs = backoffMs(this.retry, failures);
      this.release(controller, row, { failures, firstFailureAt, visibleAt: now + delayMs });
      return { deadLettered: false, delayMs };
    });
    this.wake(controller, 1);
    return out;
  }

  async requeueAfter(controller: Controller, receipt: string, seconds: number): Promise<void> {
    inWriteTransaction(this.db, () => {
      const row = this.inflight(receipt);
      if (row === undefined) return;
      // The timer is stored in the same transaction that releases the key: nothing can be lost
      // between the two. A waiting row (newer events) is left alone and delivered at once.
      this.sql(
          `INSERT INTO queue_timers (controller, key, body, fire_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (controller, key) DO UPDATE SET body = excluded.body, fire_at = min(fire_at, excluded.fire_at)`,
        )
        .run(controller, row.key, row.body, this.now() + Math.max(0, seconds) * 1000);
      this.sql('DELETE FROM queue_items WHERE id = ?').run(row.id);
    });
    this.wake(controller, 1);
  }

  async deadLetter(controller: Controller, receipt: string, failure: { reason: string; message: string }): Promise<void> {
    inWriteTransaction(this.db, () => {
      const row = this.inflight(receipt);
      if (row !== undefined) this.bury(controller, row, failure, row.failures + 1, this.now());
    });
    this.wake(controller, 1);
  }

  async depth(controller: Controller): Promise<QueueDepth> {
    const now = this.now();
    const r = this.sql(
        `SELECT
           (SELECT count(*) FROM queue_items WHERE controller = $c AND state = 'waiting' AND visible_at <= $now) AS visible,
           (SELECT count(*) FROM queue_items WHERE controller = $c AND state = 'inflight') AS inflight,
           (SELECT count(*) FROM queue_items WHERE controller = $c AND state = 'waiting' AND visible_at > $now)
             + (SELECT count(*) FROM queue_timers WHERE controller = $c) AS delayed,
           (SELECT count(*) FROM queue_dead WHERE controller = $c) AS dead,
           (SELECT min(enqueued_at) FROM queue_items WHERE controller = $c
              AND (state = 'inflight' OR visible_at <= $now)) AS oldest`,
      )
      .get({ c: controller, now }) as { visible: number; inflight: number; delayed: number; dead: number; oldest: number | null };
    return {
      controller,
      visible: r.visible,
      inFlight: r.inflight,
      delayed: r.delayed,
      deadLettered: r.dead,
      oldestAgeSeconds: r.oldest === null ? 0 : Math.max(0, (now - r.oldest) / 1000),
    };
  }

  async listDeadLetters(filter: { controller?: Controller; key?: string } = {}): Promise<DeadLetter[]> {
    return this.deadRows(filter, -1).map(toDeadLetter);
  }

  async replay(filter: ReplayFilter): Promise<ReplayReport> {
    const moved: { controller: Controller; key: string }[] = [];
    const skipped: { controller: Controller; key: string; why: string }[] = [];
    inWriteTransaction(this.db, () => {
      const now = this.now();
      for (const row of this.deadRows(filter, -1)) {
        if (filter.max !== undefined && moved.length >= filter.max) break;
        let msg: KeyMessage;
        try {
          msg = parseKeyMessage(row.body);
        } catch (err) {
          skipped.push({ controller: row.controller, key: row.key, why: (err as Error).message });
          continue;
        }
        moved.push({ controller: row.controller, key: row.key });
        if (filter.dryRun === true) continue;
        // Move = enqueue + delete in one transaction: a second replay finds nothing to move.
        this.enqueue(row.controller, row.key, JSON.stringify(recause(msg, 'REPLAY', now)), now);
        this.sql('DELETE FROM queue_dead WHERE id = ?').run(row.id);
      }
    });
    this.wake();
    return { moved, skipped };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    if (this.ownsDb && this.db.isOpen) this.db.close();
  }

  // --- internals (all called inside a write transaction) ---

  /**
   * Adds a message to the key's waiting row, or creates it (coalescing: newest cause, freshest
   * view). A new row becomes visible `delayMs` from now (the controller's wake delay); a message
   * coalesced into a waiting row keeps that row's time, as a workqueue's `AddAfter` keeps the
   * earliest.
   */
  private enqueue(controller: Controller, key: string, body: string, now: number, delayMs = 0): void {
    const row = this.sql(
        `INSERT INTO queue_items (controller, key, state, visible_at, enqueued_at) VALUES (?, ?, 'waiting', ?, ?)
         ON CONFLICT (controller, key, state) WHERE key <> '' DO UPDATE SET coalesced = coalesced + 1
         RETURNING id, coalesced`,
      )
      .get(controller, key, now + delayMs, now) as { id: number; coalesced: number };
    if (row.coalesced === 1) this.sql('INSERT INTO queue_bodies (id, body) VALUES (?, ?)').run(row.id, body);
    else this.sql('UPDATE queue_bodies SET body = vr_coalesce_body(body, ?) WHERE id = ?').run(body, row.id);
  }

  private claim(controller: Controller, max: number, now: number): ReceivedKey[] {
    this.fireTimers(controller, now);
    this.expireLeases(controller, now);
    const out: ReceivedKey[] = [];
    const candidates = this.sql(
      // In id order along queue_items_fifo: the scan stops once a batch is found (it passes only
      // rows still in backoff and keys in flight), where a range on visible_at sorted the backlog.
      `SELECT w.*, b.body FROM queue_items w INDEXED BY queue_items_fifo JOIN queue_bodies b ON b.id = w.id
       WHERE w.controller = ? AND w.state = 'waiting' AND w.visible_at <= ?
         AND NOT EXISTS (SELECT 1 FROM queue_items i WHERE i.controller = w.controller AND i.key = w.key
                         AND i.key <> '' AND i.state = 'inflight')
       ORDER BY w.id LIMIT ?`,
    );
    const take = this.sql(`UPDATE queue_items SET state = 'inflight', receipt = ?, visible_at = ? WHERE id = ?`);
    // Loop: malformed rows are dead-lettered on the way and must not shrink the batch.
    while (out.length < max) {
      const rows = candidates.all(controller, now, max - out.length) as unknown as ItemRow[];
      if (rows.length === 0) break;
      for (const row of rows) {
        let message: KeyMessage;
        try {
          message = parseKeyMessage(row.body);
        } catch (err) {
          this.bury(controller, row, { reason: 'MalformedMessage', message: (err as Error).message }, row.failures + 1, now);
          continue;
        }
        const token = `${this.receiptPrefix}${(this.receipts++).toString(36)}`;
        take.run(token, now + this.visibilityMs, row.id);
        out.push({
          message,
          receipt: `${row.id}.${token}`,
          attempt: row.failures + 1,
          ...(row.first_failure_at !== null ? { firstFailureAt: row.first_failure_at } : {}),
          enqueuedAt: row.enqueued_at,
          coalesced: row.coalesced,
        });
      }
    }
    return out;
  }

  /** Due requeue-after timers become (or coalesce into) waiting rows with cause REQUEUE. */
  private fireTimers(controller: Controller, now: number): void {
    const due = this.sql('SELECT key, body FROM queue_timers WHERE controller = ? AND fire_at <= ?')
      .all(controller, now) as unknown as { key: string; body: string }[];
    for (const t of due) {
      this.enqueue(controller, t.key, JSON.stringify(recause(JSON.parse(t.body) as KeyMessage, 'REQUEUE', now)), now);
      this.sql('DELETE FROM queue_timers WHERE controller = ? AND key = ?').run(controller, t.key);
    }
  }

  /**
   * An in-flight key whose lease ran out: its consumer died (or hung). It counts as a failed
   * attempt under the same rule as a transient failure, so a key that crashes every consumer
   * ends in the DLQ (once it has also been failing for the policy's window) instead of looping forever.
   */
  private expireLeases(controller: Controller, now: number): void {
    const lost = this.sql(`SELECT i.*, b.body FROM queue_items i JOIN queue_bodies b ON b.id = i.id WHERE i.controller = ? AND i.state = 'inflight' AND i.visible_at <= ?`)
      .all(controller, now) as unknown as ItemRow[];
    for (const row of lost) {
      const failures = row.failures + 1;
      const failure = { reason: 'LeaseExpired', message: `not settled within ${this.visibilityMs} ms` };
      const firstFailureAt = row.first_failure_at ?? now;
      if (retriesExhausted(this.retry, failures, firstFailureAt, now)) this.bury(controller, row, failure, failures, now);
      else this.release(controller, row, { failures, firstFailureAt, visibleAt: now });
    }
  }

  /** In-flight row → waiting, merged into a waiting row of newer events if there is one. */
  private release(controller: Controller, row: ItemRow, next: { failures: number; firstFailureAt: number; visibleAt: number }): void {
    const newer = this.sql(`SELECT id FROM queue_items WHERE controller = ? AND key = ? AND state = 'waiting' AND key <> ''`)
      .get(controller, row.key) as unknown as Pick<ItemRow, 'id'> | undefined;
    if (newer === undefined) {
      this.sql(`UPDATE queue_items SET state = 'waiting', receipt = NULL, visible_at = ?, failures = ?, first_failure_at = ? WHERE id = ?`)
        .run(next.visibleAt, next.failures, next.firstFailureAt, row.id);
      return;
    }
    // Newer events wait behind the retry (per-key order) and inherit the key's failure count,
    // as client-go's per-item limiter forgets only on success.
    this.sql(
        `UPDATE queue_items SET visible_at = ?, failures = ?, first_failure_at = ?, enqueued_at = min(enqueued_at, ?),
           coalesced = coalesced + ? WHERE id = ?`,
      )
      .run(next.visibleAt, next.failures, next.firstFailureAt, row.enqueued_at, row.coalesced, newer.id);
    this.sql('DELETE FROM queue_items WHERE id = ?').run(row.id);
  }

  private bury(controller: Controller, row: ItemRow, failure: { reason: string; message: string }, attempts: number, now: number): void {
    this.sql(
        `INSERT INTO queue_dead (controller, key, body, reason, message, attempts, first_failure_at, last_failure_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (controller, key) WHERE key <> '' DO UPDATE SET body = excluded.body, reason = excluded.reason,
           message = excluded.message, attempts = excluded.attempts, last_failure_at = excluded.last_failure_at`,
      )
      .run(controller, row.key, row.body, failure.reason, failure.message, attempts, row.first_failure_at ?? now, now);
    this.sql('DELETE FROM queue_items WHERE id = ?').run(row.id);
  }

  private inflight(receipt: string): ItemRow | undefined {
    const { id, token } = parseReceipt(receipt);
    return this.sql(`SELECT i.*, b.body FROM queue_items i JOIN queue_bodies b ON b.id = i.id WHERE i.id = ? AND i.receipt = ? AND i.state = 'inflight'`)
      .get(id, token) as unknown as ItemRow | undefined;
  }

  private deadRows(filter: { controller?: Controller; key?: string }, limit: number): DeadRow[] {
    return this.sql(
        `SELECT * FROM queue_dead WHERE ($c IS NULL OR controller = $c) AND ($k IS NULL OR key = $k) ORDER BY id LIMIT $limit`,
      )
      .all({ c: filter.controller ?? null, k: filter.key ?? null, limit }) as unknown as DeadRow[];
  }

  /** Prepared statements are compiled once per connection (compiling dominated receive). */
  private sql(text: string): StatementSync {
    let st = this.statements.get(text);
    if (st === undefined) {
      st = this.db.prepare(text);
      this.statements.set(text, st);
    }
    return st;
  }

  /** Wakes up to `n` sleeping receivers of `controller` (every receiver when no controller is named). */
  private wake(controller?: Controller, n = Infinity): void {
    const sets = controller === undefined ? [...this.wakers.values()] : [this.wakers.get(controller)].filter((x) => x !== undefined);
    for (const set of sets) {
      for (const w of [...set]) {
        if (n-- <= 0) return;
        w();
      }
    }
  }

  /**
   * Whether a claim could find anything now: a waiting row visible, an in-flight lease run out, a
   * timer due (a read along the indexes; the claim, in its write transaction, decides). A visible
   * row whose key is in flight counts: the claim skips it, and the receiver sleeps as before.
   */
  private anythingDue(controller: Controller): boolean {
    const r = this.sql(
      `SELECT EXISTS (SELECT 1 FROM queue_items WHERE controller = $c AND state = 'waiting' AND visible_at <= $now)
           OR EXISTS (SELECT 1 FROM queue_items WHERE controller = $c AND state = 'inflight' AND visible_at <= $now)
           OR EXISTS (SELECT 1 FROM queue_timers WHERE controller = $c AND fire_at <= $now) AS due`,
    ).get({ c: controller, now: this.now() }) as { due: number };
    return r.due === 1;
  }

  /** Milliseconds until this controller's next known due time (backoff, timer, lease), capped. */
  private untilDue(controller: Controller): number {
    const now = this.now();
    const r = this.sql(
      `SELECT min(t) AS t FROM (
         SELECT min(visible_at) AS t FROM queue_items WHERE controller = $c AND state = 'waiting' AND visible_at > $now
         UNION ALL SELECT min(visible_at) FROM queue_items WHERE controller = $c AND state = 'inflight' AND visible_at > $now
         UNION ALL SELECT min(fire_at) FROM queue_timers WHERE controller = $c)`,
    ).get({ c: controller, now }) as { t: number | null };
    return r.t === null ? MAX_IDLE_MS : Math.max(1, Math.min(MAX_IDLE_MS, r.t - now));
  }

  private sleep(controller: Controller, ms: number, stop?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.wakers.get(controller);
      if (!set) this.wakers.set(controller, (set = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        stop?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
      stop?.addEventListener('abort', done, { once: true });
    });
  }
}

function parseReceipt(receipt: string): { id: number; token: string } {
  const dot = receipt.indexOf('.');
  const id = Number(receipt.slice(0, dot));
  if (dot <= 0 || !Number.isSafeInteger(id)) throw new ReconcilerError('InvalidReceipt', `not a receipt of this queue: ${receipt}`);
  return { id, token: receipt.slice(dot + 1) };
}

function toDeadLetter(r: DeadRow): DeadLetter {
  return {
    controller: r.controller,
    key: r.key,
    body: r.body,
    reason: r.reason,
    message: r.message,
    attempts: r.attempts,
    firstFailureAt: r.first_failure_at,
    lastFailureAt: r.last_failure_at,
  };
}
