/**
 * Maps the result of one reconcile to the queue (docs/architecture.md §6.1–2): done → ack, requeue-after →
 * durable timer, terminal or a permanent error → dead letter with its reason, any other thrown
 * error → retry with per-key backoff (dead-lettered once retries are exhausted).
 * Used by the Lambda batch handler and by the local runtime's workers alike.
 */
import { errorText, isPermanent, reasonOf } from '../errors.ts';
import type { Outcome } from '../reconcile/outcome.ts';
import type { Controller } from './message.ts';
import type { KeyQueue, ReceivedKey } from './port.ts';

/** How a delivery ended, for logs and `reconcile_total{result}`. */
export type Settled = 'done' | 'requeued' | 'retrying' | 'dead-lettered';

export interface SettleOptions {
  /**
   * Whether to ack a successful key. A Lambda SQS trigger deletes successful messages itself,
   * so the batch handler passes false; receive()-based workers pass true.
   */
  readonly ackDone: boolean;
}

/** Runs `work` for one received key and settles the key on `queue` according to its result. */
export async function settle(
  queue: Pick<KeyQueue, 'ack' | 'retryLater' | 'requeueAfter' | 'deadLetter'>,
  controller: Controller,
  rk: ReceivedKey,
  work: () => Promise<Outcome>,
  opts: SettleOptions,
): Promise<Settled> {
  let outcome: Outcome;
  try {
    outcome = await work();
  } catch (err) {
    const failure = { reason: reasonOf(err), message: errorText(err) };
    if (isPermanent(err)) {
      await queue.deadLetter(controller, rk.receipt, failure);
      return 'dead-lettered';
    }
    const r = await queue.retryLater(controller, rk.receipt, failure);
    return r.deadLettered ? 'dead-lettered' : 'retrying';
  }
  switch (outcome.kind) {
    case 'done':
      if (opts.ackDone) await queue.ack(controller, rk.receipt);
      return 'done';
    case 'requeue':
      await queue.requeueAfter(controller, rk.receipt, outcome.afterSeconds);
      return 'requeued';
    case 'terminal':
      await queue.deadLetter(controller, rk.receipt, { reason: outcome.reason, message: outcome.message });
      return 'dead-lettered';
  }
}
