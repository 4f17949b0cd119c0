/**
 * The key queue port (docs/architecture.md §2). One implementation over SQLite (embedded, `npm start`), one
 * over SQS FIFO (AWS). One conformance suite (`test/queue/`) runs unchanged against both.
 *
 * Guarantees every implementation gives:
 * - per-key serialization: a key is never handed to two consumers at once;
 * - exact duplicates (same {@link dedupId}) are dropped;
 * - waiting duplicates of one key are coalesced into one delivery where the backend allows it
 *   (always in SQLite; within a received batch on SQS — see docs/queue.md);
 * - nothing is lost: a message leaves the queue only by ack, by requeue-after (which schedules a
 *   durable timer first) or by dead-lettering (which stores it in the DLQ with a reason).
 */
import type { Controller, KeyMessage } from './message.ts';

/** One key handed to a consumer. */
export interface ReceivedKey {
  /** The newest cause among the coalesced messages for this key. */
  readonly message: KeyMessage;
  /** Opaque handle for ack / retryLater / requeueAfter / deadLetter. */
  readonly receipt: string;
  /** 1 on the first try; n on the n-th consecutive failed-and-retried delivery of this key. */
  readonly attempt: number;
  /**
   * Epoch ms the key's current run of failures began (SQLite: its first failure; SQS: the first
   * receive of its oldest message, ≈ the start of the attempt that failed first). Absent when the
   * key has not failed since its last success.
   */
  readonly firstFailureAt?: number;
  /** Epoch ms the oldest coalesced message was enqueued (for workqueue_queue_duration_seconds). */
  readonly enqueuedAt: number;
  /** How many messages were coalesced into this delivery (1 = none). */
  readonly coalesced: number;
}

export interface QueueDepth {
  readonly controller: Controller;
  /** Ready to be received now. */
  readonly visible: number;
  /** Received, not yet acked. */
  readonly inFlight: number;
  /** Waiting on a requeue-after timer or a retry backoff. */
  readonly delayed: number;
  readonly deadLettered: number;
  /** Age in seconds of the oldest visible or in-flight message, 0 when empty. */
  readonly oldestAgeSeconds: number;
}

export interface DeadLetter {
  readonly controller: Controller;
  readonly key: string;
  /** The last message (the raw body when it was malformed and could not be parsed). */
  readonly body: string;
  readonly reason: string;
  readonly message: string;
  readonly attempts: number;
  readonly firstFailureAt: number;
  readonly lastFailureAt: number;
}

export interface ReplayFilter {
  readonly controller?: Controller;
  /** Only this key. Without it, every dead-lettered key that matches the controller. */
  readonly key?: string;
  /** Report what would move, move nothing. */
  readonly dryRun?: boolean;
  readonly max?: number;
}

export interface ReplayReport {
  /** Keys put back on their queue (or that would be, with dryRun). */
  readonly moved: readonly { controller: Controller; key: string }[];
  /** Dead letters that cannot be replayed (malformed bodies): they stay in the DLQ. */
  readonly skipped: readonly { controller: Controller; key: string; why: string }[];
}

/**
 * Retry policy: client-go's per-item exponential limiter, plus a dead-letter threshold for
 * transient failures that takes both a count and a time (docs/reliability.md, "Dead letters").
 * KubeVirt's workqueue never drops a key; we dead-letter a transiently failing key only once it
 * has failed `maxAttempts` times in a row AND has been failing without a break for
 * `deadLetterAfterMs`, so an API server outage shorter than that dead-letters nothing. Permanent
 * errors and terminal outcomes are dead-lettered at once whatever the policy.
 */
export interface RetryPolicy {
  /** First backoff, ms (client-go: 5). Doubles on each consecutive failure. */
  readonly baseDelayMs: number;
  /** Cap, ms (client-go: 1000 s). */
  readonly maxDelayMs: number;
  /** A transient failure may dead-letter only from this many consecutive failed attempts on. */
  readonly maxAttempts: number;
  /**
   * …and only once the key's first failure of this run (no success since) is at least this old,
   * ms. 0 restores a pure count (tests that need a quick dead letter).
   */
  readonly deadLetterAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseDelayMs: 5, maxDelayMs: 1_000_000, maxAttempts: 16, deadLetterAfterMs: 3_600_000 };

/**
 * Whether a transient failure ends a key's retries: its `failures`-th consecutive failure (this
 * one included), in a run of failures that began at `firstFailureAt`, at `now`. Both queues and
 * the trace's prediction (shared/reconcile/trace-entry.ts) use this one rule.
 */
export function retriesExhausted(
  policy: Pick<RetryPolicy, 'maxAttempts' | 'deadLetterAfterMs'>,
  failures: number,
  firstFailureAt: number,
  now: number,
): boolean {
  return failures >= policy.maxAttempts && now - firstFailureAt >= policy.deadLetterAfterMs;
}

/** Backoff before attempt `attempt + 1`, after `attempt` failures (attempt ≥ 1). */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

export interface KeyQueue {
  /** Sends keys (batched by the implementation). Resolves once they are durably stored. */
  send(messages: readonly KeyMessage[]): Promise<void>;
  /**
   * Up to `max` keys of `controller` that no other consumer holds, waiting up to `waitMs` for the
   * first. Malformed bodies found on the way are dead-lettered (reason MalformedMessage), never
   * returned. `stop`, when aborted, may end the wait early with nothing (its consumer is stopping):
   * the embedded queue does; SQS's long poll runs its course.
   */
  receive(controller: Controller, max: number, waitMs: number, stop?: AbortSignal): Promise<ReceivedKey[]>;
  /**
   * How long a received key stays leased (the visibility timeout): a consumer that neither settles
   * nor extends it within this long is presumed dead, and the key is delivered again as a failed attempt.
   */
  readonly leaseMs: number;
  /**
   * Still working: the key's lease starts over (a live consumer's heartbeat, so a reconcile slower
   * than the lease is not taken for a dead consumer). False when the receipt no longer holds the
   * key (its lease ran out and another consumer received it, or it was settled); nothing changes then.
   */
  extendLease(controller: Controller, receipt: string): Promise<boolean>;
  /** Done: the key leaves the queue and its failure count resets. */
  ack(controller: Controller, receipt: string): Promise<void>;
  /**
   * Transient failure: retry after the policy's backoff for this attempt, or dead-letter once
   * {@link retriesExhausted} (`maxAttempts` failures in a row and `deadLetterAfterMs` of failing).
   * Newer events for the key wait behind the retry (per-key order).
   */
  retryLater(controller: Controller, receipt: string, failure: { reason: string; message: string }): Promise<{ deadLettered: boolean; delayMs: number }>;
  /**
   * Done for now, look again in `seconds`: a durable timer re-enqueues the key. Unlike a retry it
   * does not hold back newer events for the same key, which are delivered as soon as they arrive.
   */
  requeueAfter(controller: Controller, receipt: string, seconds: number): Promise<void>;
  /** Permanent failure: into the DLQ with a reason. */
  deadLetter(controller: Controller, receipt: string, failure: { reason: string; message: string }): Promise<void>;
  depth(controller: Controller): Promise<QueueDepth>;
  listDeadLetters(filter?: { controller?: Controller; key?: string }): Promise<DeadLetter[]>;
  /** Puts dead-lettered keys back on their queues as cause REPLAY; safe to run twice. */
  replay(filter: ReplayFilter): Promise<ReplayReport>;
  close(): Promise<void>;
}
