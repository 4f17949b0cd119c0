/**
 * Durable requeue-after timers on AWS (see docs/queue.md, "requeue-after"): a timer is a message on
 * a standard SQS queue `<prefix>-<controller>-timers`, delayed by DelaySeconds (at most 900 s).
 * This forwarder receives it when the delay has passed and either sends the key to the
 * controller's FIFO queue (cause REQUEUE) or, for timers longer than 15 minutes, re-delays it
 * for the next leg.
 *
 * `planTimer` is the pure decision; `handler` is the Lambda entry (SQS trigger on the timer
 * queues, partial batch responses); `applyTimerPlan` is shared with the local pump in tests.
 */
import { createHash } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { dedupId, isSweepKey, parseKeyMessage, SWEEP_EVENT, type Controller, type KeyMessage } from './message.ts';
import { recause } from './recause.ts';

/** SQS's ceiling for DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

/** The timer message body. */
export interface TimerBody {
  readonly v: 1;
  /**
   * Epoch ms the key is due. A sweep's schedule (shared/reconcile/sweep.ts `sweepTimerBody`)
   * writes an ISO 8601 instant instead, which is all EventBridge Scheduler can put there.
   */
  readonly fireAt: number | string;
  readonly message: KeyMessage;
}

export type TimerPlan =
  | { readonly kind: 'forward'; readonly controller: Controller; readonly message: KeyMessage; readonly groupId: string; readonly dedupId: string }
  | { readonly kind: 'wait'; readonly controller: Controller; readonly body: string; readonly delaySeconds: number }
  | { readonly kind: 'drop'; readonly why: string };

/** The body and first delay of a new timer. */
export function newTimer(message: KeyMessage, seconds: number, now: number): { body: string; delaySeconds: number } {
  const fireAt = now + Math.max(0, seconds) * 1000;
  return { body: JSON.stringify({ v: 1, fireAt, message } satisfies TimerBody), delaySeconds: delayFor(fireAt, now) };
}

/** What to do with a timer message received at `now`. */
export function planTimer(body: string, now: number): TimerPlan {
  let t: TimerBody;
  try {
    const raw = JSON.parse(body) as Partial<TimerBody>;
    const fireAt = typeof raw.fireAt === 'string' ? Date.parse(raw.fireAt) : raw.fireAt;
    if (raw.v !== 1 || typeof fireAt !== 'number' || !Number.isFinite(fireAt)) return { kind: 'drop', why: `not a timer (v/fireAt ${JSON.stringify(raw.fireAt)})` };
    t = { v: 1, fireAt, message: parseKeyMessage(JSON.stringify(raw.message)) };
  } catch (err) {
    return { kind: 'drop', why: (err as Error).message };
  }
  const fireAt = t.fireAt as number;
  // SQS may deliver a delayed message a little early or late; anything due within a second fires.
  if (fireAt - now > 1000) return { kind: 'wait', controller: t.message.controller, body, delaySeconds: delayFor(fireAt, now) };
  // A sweep is stamped with its scheduled instant: the keys it expands into are deduplicated by it.
  const message = isSweepKey(t.message.key) ? { ...t.message, cause: { ...t.message.cause, event: SWEEP_EVENT, seenAt: fireAt } } : recause(t.message, 'REQUEUE', now);
  return {
    kind: 'forward',
    controller: t.message.controller,
    message,
    groupId: t.message.key,
    // Per timer, not per key: a re-delivered timer message is dropped by FIFO dedup, while the
    // next requeue-after of the same key (another fireAt) is not.
    dedupId: createHash('sha256').update(`${dedupId(t.message)}\ntimer\n${fireAt}`).digest('hex'),
  };
}

function delayFor(fireAt: number, now: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((fireAt - now) / 1000)));
}

/** Where the forwarder sends: the controller's FIFO queue and its timer queue. */
export type TimerUrls = (controller: Controller) => Promise<{ queue: string; timers: string }>;

/** Carries out a plan. Throws when SQS refuses (the caller leaves the timer message for a retry). */
export async function applyTimerPlan(client: SQSClient, urls: TimerUrls, plan: TimerPlan): Promise<void> {
  if (plan.kind === 'drop') return;
  const u = await urls(plan.controller);
  if (plan.kind === 'wait') {
    await client.send(new SendMessageCommand({ QueueUrl: u.timers, MessageBody: plan.body, DelaySeconds: plan.delaySeconds }));
    return;
  }
  await client.send(
    new SendMessageCommand({
      QueueUrl: u.queue,
      MessageBody: JSON.stringify(plan.message),
      MessageGroupId: plan.groupId,
      MessageDeduplicationId: plan.dedupId,
    }),
  );
}

/** Reads the queue URLs from the environment (names in docs/queue.md). */
export function envTimerUrls(env: NodeJS.ProcessEnv = process.env): TimerUrls {
  return async (controller) => {
    const c = controller.toUpperCase();
    const queue = env[`QUEUE_URL_${c}`];
    const timers = env[`TIMER_QUEUE_URL_${c}`];
    if (queue === undefined || timers === undefined) throw new Error(`QUEUE_URL_${c} and TIMER_QUEUE_URL_${c} must be set`);
    return { queue, timers };
  };
}

let client: SQSClient | undefined; // one per cold start

/** Lambda entry: SQS trigger on the timer queues, with ReportBatchItemFailures. */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  client ??= new SQSClient({});
  const urls = envTimerUrls();
  const now = Date.now();
  const failures: { itemIdentifier: string }[] = [];
  await Promise.all(
    event.Records.map(async (r) => {
      const plan = planTimer(r.body, now);
      if (plan.kind === 'drop') console.error(JSON.stringify({ level: 'ERROR', message: 'dropped timer', reason: 'MalformedTimer', why: plan.why }));
      try {
        await applyTimerPlan(client!, urls, plan);
      } catch {
        failures.push({ itemIdentifier: r.messageId }); // redelivered; FIFO dedup absorbs a double send
      }
    }),
  );
  return { batchItemFailures: failures };
}
