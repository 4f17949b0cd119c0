/**
 * The trace entry of one reconcile (shared/state/traces.ts), built from what the delivery, the
 * call counter and the result say. Pure: the reconcile path records it, tests read it.
 */
import { isPermanent, reasonOf } from '../errors.ts';
import type { ApiCallCounter } from '../kube/call-counter.ts';
import type { Controller } from '../queue/message.ts';
import { retriesExhausted, type ReceivedKey, type RetryPolicy } from '../queue/port.ts';
import type { TraceEntry, TraceOutcome } from '../state/traces.ts';
import type { Outcome } from './outcome.ts';

/** Writes kept per entry: a reconcile makes one kind of mutation a pass, so this is never reached in practice. */
export const MAX_TRACE_WRITES = 50;

/** Messages are cut to this length: an entry stays small (one DynamoDB item, one SQLite row). */
const MAX_MESSAGE = 300;

export interface TraceInput {
  readonly controller: Controller;
  readonly received: ReceivedKey;
  readonly result: { readonly outcome: Outcome } | { readonly error: unknown };
  readonly counter: ApiCallCounter;
  readonly startedAt: number;
  readonly durationMs: number;
  /** The queue's policy: a transient failure that exhausts it is dead-lettered, not retried. */
  readonly retry: Pick<RetryPolicy, 'maxAttempts' | 'deadLetterAfterMs'>;
  /**
   * When the failure happened on the queue's clock, the one `received.firstFailureAt` was taken
   * on (wall time; `startedAt` may be a sped-up sandbox clock). Default `startedAt + durationMs`.
   */
  readonly failedAt?: number;
}

/** The entry for one settled reconcile. */
export function traceEntryOf(input: TraceInput): TraceEntry {
  const { received: rk, counter } = input;
  const { kind, namespace, name, resourceVersion, event, seenAt } = rk.message.cause;
  return {
    controller: input.controller,
    key: rk.message.key,
    cause: { kind, namespace, name, resourceVersion, event, seenAt },
    enqueuedAt: rk.enqueuedAt,
    receivedAt: input.startedAt,
    attempt: rk.attempt,
    coalesced: rk.coalesced,
    outcome: outcomeOf(input),
    reads: counter.ofVerb('get', 'list'),
    writes: counter.writes().slice(0, MAX_TRACE_WRITES),
    durationMs: input.durationMs,
  };
}

/** What the queue does with the result (shared/queue/settle.ts), said the way an operator reads it. */
function outcomeOf(input: TraceInput): TraceOutcome {
  const { result } = input;
  if ('outcome' in result) {
    const o = result.outcome;
    if (o.kind === 'done') return { kind: 'done' };
    if (o.kind === 'requeue') return { kind: 'requeue', afterSeconds: o.afterSeconds, why: o.why };
    return { kind: 'dead-lettered', reason: o.reason, message: cut(o.message) };
  }
  const failure = { reason: reasonOf(result.error), message: cut(result.error instanceof Error ? result.error.message : String(result.error)) };
  // The queues' rule (shared/queue/port.ts retriesExhausted): this failure is the attempt-th in a
  // row (attempt = failures + 1), and the run began at the key's first failure — this one, when
  // it has none — so it dead-letters only past maxAttempts AND the policy's window.
  const failedAt = input.failedAt ?? input.startedAt + input.durationMs;
  const exhausted = retriesExhausted(input.retry, input.received.attempt, input.received.firstFailureAt ?? failedAt, failedAt);
  return { kind: isPermanent(result.error) || exhausted ? 'dead-lettered' : 'retry', ...failure };
}

function cut(s: string): string {
  return s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE - 1)}…` : s;
}
