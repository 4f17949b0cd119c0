/**
 * Per-key reconcile traces (issue 18): one compact entry per reconcile of a key, so that
 * `virt-reconciler trace` can print the timeline event → message → reconcile → writes and
 * `virt-reconciler diagnose` can read what each reconcile decided. Part of the state port
 * ({@link StateStore.traces}); both backends keep the same bound: the last
 * {@link TRACE_ENTRIES_PER_KEY} entries of a key, none older than {@link TRACE_TTL_MS}.
 *
 * Recording never fails the reconcile it describes. An invocation that reconciles several keys (a
 * Lambda batch, a local worker's batch) collects its entries in a {@link TraceBuffer} and writes
 * them with one {@link Traces.recordBatch}: on DynamoDB one item for the whole invocation, so a
 * batch of 10 costs about one write unit instead of ten (docs/state.md "Traces").
 */

/** How many entries a key keeps; older ones are pruned (SQLite) or never read again (DynamoDB, until their TTL). */
export const TRACE_ENTRIES_PER_KEY = 50;

/** How long an entry lives: long enough to look back on an incident, short enough to stay small. */
export const TRACE_TTL_MS = 6 * 60 * 60 * 1000;

/** What made the relay send the key (the message's cause, docs/architecture.md §2). */
export interface TraceCause {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  /** ADDED | MODIFIED | DELETED | RELIST | REPLAY | REQUEUE | SWEEP */
  readonly event: string;
  /** Epoch ms when the relay saw the event. */
  readonly seenAt: number;
}

/** One API write a reconcile made, and how the apiserver answered it. */
export interface TraceWrite {
  /** `create`, `update`, `patch` or `delete`. */
  readonly verb: string;
  /** Plural resource, `/status` appended for status writes (`virtualmachineinstances/status`). */
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  /** HTTP status (201, 200, 409, 422…); 0 when no answer came (network failure). */
  readonly code: number;
}

/** How the reconcile ended, as the queue settled it. */
export type TraceOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeue'; readonly afterSeconds: number; readonly why: string }
  | { readonly kind: 'retry'; readonly reason: string; readonly message: string }
  | { readonly kind: 'dead-lettered'; readonly reason: string; readonly message: string };

/** One reconcile of one key. */
export interface TraceEntry {
  /** The controller that reconciled (`vmi`, `vm`, `migration`, …). */
  readonly controller: string;
  /** The controller key (`namespace/name`). */
  readonly key: string;
  readonly cause: TraceCause;
  /** Epoch ms the oldest coalesced message was enqueued. */
  readonly enqueuedAt: number;
  /** Epoch ms the reconcile started (the key was received). */
  readonly receivedAt: number;
  readonly attempt: number;
  /** Messages coalesced into this delivery (1 = none). */
  readonly coalesced: number;
  readonly outcome: TraceOutcome;
  /** Reads (get/list) the reconcile made. */
  readonly reads: number;
  /** Writes in the order they were made. */
  readonly writes: readonly TraceWrite[];
  readonly durationMs: number;
}

/** The trace part of the state port. */
export interface Traces {
  /** Stores `entry` (one table write) and drops what falls out of the per-key bound. */
  record(entry: TraceEntry, now: number): Promise<void>;
  /**
   * Stores the entries of one invocation, of any keys, as one write where the backend can (one
   * DynamoDB item; one SQLite transaction). An empty list writes nothing.
   */
  recordBatch(entries: readonly TraceEntry[], now: number): Promise<void>;
  /**
   * The newest entries of `controller`'s `key` (at most `limit`, default and cap
   * {@link TRACE_ENTRIES_PER_KEY}), younger than {@link TRACE_TTL_MS} at `now`, oldest first.
   */
  recent(controller: string, key: string, now: number, limit?: number): Promise<TraceEntry[]>;
}

/** The per-key limit a read applies: `limit` clamped to 1…{@link TRACE_ENTRIES_PER_KEY}. */
export function traceLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return TRACE_ENTRIES_PER_KEY;
  return Math.max(1, Math.min(TRACE_ENTRIES_PER_KEY, Math.trunc(limit)));
}

/**
 * The entries of one invocation, held until {@link TraceBuffer.flush} writes them with one
 * `recordBatch`. It is a {@link Traces} itself, so the reconcile path records into it unchanged;
 * reads go to the store.
 */
export class TraceBuffer implements Traces {
  readonly #store: Traces;
  #entries: TraceEntry[] = [];

  constructor(store: Traces) {
    this.#store = store;
  }

  /** Entries held, not yet written. */
  get size(): number {
    return this.#entries.length;
  }

  async record(entry: TraceEntry): Promise<void> {
    this.#entries.push(entry);
  }

  async recordBatch(entries: readonly TraceEntry[]): Promise<void> {
    this.#entries.push(...entries);
  }

  recent(controller: string, key: string, now: number, limit?: number): Promise<TraceEntry[]> {
    return this.#store.recent(controller, key, now, limit);
  }

  /**
   * Writes what is held with one `recordBatch` and empties the buffer. A failure is handed to
   * `onError` (the entries are dropped: a trace never holds up the keys it describes).
   */
  async flush(now: number, onError: (err: unknown, entries: readonly TraceEntry[]) => void): Promise<void> {
    const entries = this.#entries;
    this.#entries = [];
    if (entries.length === 0) return;
    try {
      await this.#store.recordBatch(entries, now);
    } catch (err) {
      onError(err, entries);
    }
  }
}
