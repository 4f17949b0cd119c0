/**
 * The Lambda side of the key queue: an SQS FIFO event → one reconcile per key → a partial batch
 * response (ReportBatchItemFailures).
 *
 * Our own equivalent of Powertools' `SqsFifoPartialProcessorAsync` with `skipGroupOnError: true`,
 * because we coalesce: the records of one message group (= one key) become ONE reconcile (the
 * newest cause), so a failure fails exactly that key's records — the rest of its own group — and
 * never another key's. Different keys run concurrently, at most `maxInFlight` at a time (the
 * function's share of the apiserver budget is sized per reconcile in flight: infra/aws/settings.ts).
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Outcome } from '../reconcile/outcome.ts';
import type { Controller } from './message.ts';
import type { KeyQueue, ReceivedKey } from './port.ts';
import { settle, type Settled } from './settle.ts';
import { groupReceived, toSqsReceived } from './sqs-grouping.ts';

export interface KeyBatchDeps {
  readonly controller: Controller;
  /** The SQS key queue (same queue the event came from): retries, timers, dead letters. */
  readonly queue: Pick<KeyQueue, 'ack' | 'retryLater' | 'requeueAfter' | 'deadLetter'> & HandsBack;
  /** One reconcile; a thrown error is transient unless it is an InvalidInputError. */
  readonly reconcile: (rk: ReceivedKey) => Promise<Outcome>;
  /** Keys reconciled at once (default: every key of the batch); 1 runs them one after another. */
  readonly maxInFlight?: number;
  /** Called once per key (or malformed record) with how it ended. */
  readonly onSettled?: (e: { key: string; result: Settled | 'failed'; reason?: string }) => void;
  /**
   * The invocation's time left (the Lambda context's `getRemainingTimeInMillis`). With it, a key
   * is started only while more than {@link reserveMs} is left, so a batch whose keys run one
   * after another never times out halfway: the keys not started are handed back (visible again
   * at once, through `queue.handBack` when the queue has it) and reported as failures, to be
   * delivered again — one receive more on their count, nothing lost, nothing reconciled twice.
   */
  readonly remainingMs?: () => number;
}

/**
 * The time a key may be started with: at least {@link MIN_RESERVE_MS}, and twice the slowest key
 * of this batch so far (the next one is likely no faster).
 */
export function reserveMs(slowestKeyMs: number): number {
  return Math.max(MIN_RESERVE_MS, 2 * slowestKeyMs);
}

/** The least time left for starting a key: a reconcile's API calls, its settle and the trace write. */
export const MIN_RESERVE_MS = 5_000;

/** What {@link processKeyBatch} needs to hand a key back early, and to spot a key its consumers keep dying on (the SQS queue has both). */
interface HandsBack {
  handBack?(controller: Controller, receipt: string): Promise<void>;
  /** The failure to dead-letter a delivery with, unreconciled, when its consumers keep dying on it (SqsKeyQueue.abandoned). */
  abandoned?(received: ReceivedKey): { reason: string; message: string } | undefined;
}

/** Handles one SQS FIFO event. Never throws: every failure is a batch item failure. */
export async function processKeyBatch(event: SQSEvent, deps: KeyBatchDeps): Promise<SQSBatchResponse> {
  const { keys, malformed } = groupReceived(event.Records.map(fromRecord));
  const failed: string[] = [];
  const report = deps.onSettled ?? ((): void => undefined);
  // A malformed record goes to the DLQ with its reason and counts as a success (so it is deleted).
  const bad = malformed.map(async (m) => {
    try {
      await deps.queue.deadLetter(deps.controller, m.receipt, { reason: 'MalformedMessage', message: m.why });
      report({ key: '', result: 'dead-lettered', reason: 'MalformedMessage' });
    } catch {
      failed.push(m.messageId);
    }
  });
  let slowestMs = 0;
  const one = async ({ received, messageIds }: (typeof keys)[number]) => {
    let result: Settled | 'failed';
    const started = Date.now();
    // The trigger receives for us: a key whose invocations keep being killed (we never saw those
    // failures, SQS counted them) is dead-lettered here, as SqsKeyQueue.receive does.
    const gone = deps.queue.abandoned?.(received);
    try {
      if (gone !== undefined) {
        await deps.queue.deadLetter(deps.controller, received.receipt, gone);
        result = 'dead-lettered';
      } else result = await settle(deps.queue, deps.controller, received, () => deps.reconcile(received), { ackDone: false });
    } catch {
      result = 'failed'; // the queue itself failed: leave the records for redelivery
    }
    // 'retrying': the backoff is set on the messages' visibility; reporting them failed keeps the
    // trigger from deleting them. Only this key's records are reported.
    if (result === 'retrying' || result === 'failed') failed.push(...messageIds);
    slowestMs = Math.max(slowestMs, Date.now() - started);
    report({ key: received.message.key, result, ...(gone !== undefined ? { reason: gone.reason } : {}) });
  };
  // A key not started for want of time: visible again at once, and reported failed so the
  // trigger keeps it. If the hand-back itself fails it still comes back, after its visibility.
  const handBack = async ({ received, messageIds }: (typeof keys)[number]) => {
    try {
      await deps.queue.handBack?.(deps.controller, received.receipt);
    } catch {
      // redelivered after the visibility timeout instead
    }
    failed.push(...messageIds);
    report({ key: received.message.key, result: 'failed', reason: 'NoTimeLeft' });
  };
  const timeLeft = deps.remainingMs;
  // Up to maxInFlight lanes, each taking the next key when its last one settled.
  const pending = [...keys];
  const lanes = Math.max(1, Math.min(deps.maxInFlight ?? pending.length, pending.length));
  const good = Array.from({ length: lanes }, async () => {
    for (let k = pending.shift(); k !== undefined; k = pending.shift()) {
      if (timeLeft && timeLeft() <= reserveMs(slowestMs)) await handBack(k);
      else await one(k);
    }
  });
  await Promise.all([...bad, ...good]);
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
}

function fromRecord(r: SQSRecord): ReturnType<typeof toSqsReceived> {
  return toSqsReceived({
    messageId: r.messageId,
    receiptHandle: r.receiptHandle,
    body: r.body,
    attributes: r.attributes as unknown as Partial<Record<string, string>>,
  });
}
