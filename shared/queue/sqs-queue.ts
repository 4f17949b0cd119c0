/**
 * The key queue on AWS (docs/architecture.md §2): per controller one SQS FIFO queue
 * `<prefix>-<controller>.fifo` (MessageGroupId = key, MessageDeduplicationId = dedupId), its FIFO
 * DLQ `<prefix>-<controller>-dlq.fifo` and a standard timer queue `<prefix>-<controller>-timers`
 * for requeue-after (see timer-forwarder.ts). Gaps against the SQLite queue: docs/queue.md.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { InvalidInputError, TransientError } from '../errors.ts';
import { wakeDelayMs } from '../controllers.ts';
import { checkKeyMessage, CONTROLLERS, dedupId, parseKeyMessage, type Controller, type KeyMessage } from './message.ts';
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
import { decodeReceipt, groupReceived, toSqsReceived, type SqsReceipt } from './sqs-grouping.ts';
import { applyTimerPlan, newTimer, planTimer } from './timer-forwarder.ts';

export interface SqsQueueUrls {
  readonly queue: string;
  readonly dlq: string;
  readonly timers: string;
}

export interface SqsKeyQueueOptions {
  readonly client: SQSClient;
  /** Queue name prefix (ensureQueues, and URL lookup when `urls` lacks a controller). */
  readonly prefix: string;
  /** Known URLs (production: from env, see {@link queueUrlsFromEnv}). */
  readonly urls?: Partial<Record<Controller, SqsQueueUrls>>;
  readonly retry?: RetryPolicy;
  /** Visibility timeout of a receive (the lease). */
  readonly visibilityTimeoutSeconds?: number;
  readonly clock?: () => number;
}

/** SQS's ceiling for a visibility timeout (12 h). */
const MAX_VISIBILITY_SECONDS = 43_200;

/**
 * The source queues' redrive `maxReceiveCount`: SQS's maximum. Our own retry decides when a key
 * is dead-lettered (a count AND a time window, shared/queue/port.ts RetryPolicy), so SQS's
 * redrive, which counts receives only, must never fire first. We raise it rather than re-send a
 * retrying message as a fresh one near the limit: a FIFO queue has no per-message delay, so a
 * re-sent message would skip its backoff and go behind the key's own newer events, and it would
 * reset the receive count that is our only sign of a consumer that dies every time. With the
 * default policy a key reaches its window after 22 receives; the constructor refuses a
 * policy whose window does not fit well inside this count ({@link receivesToExhaust}).
 */
export const SQS_MAX_RECEIVE_COUNT = 1000;

/** Receives kept free under the redrive for deliveries that never reach retryLater (lease expiries, hand-backs). */
const REDRIVE_MARGIN = 100;

/** Queue names for a prefix and controller. */
export function queueNames(prefix: string, c: Controller): { queue: string; dlq: string; timers: string } {
  return { queue: `${prefix}-${c}.fifo`, dlq: `${prefix}-${c}-dlq.fifo`, timers: `${prefix}-${c}-timers` };
}

/** URLs from QUEUE_URL_VMI / DLQ_URL_VMI / TIMER_QUEUE_URL_VMI (…_VM, …_MIGRATION). */
export function queueUrlsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<Record<Controller, SqsQueueUrls>> {
  const out: Partial<Record<Controller, SqsQueueUrls>> = {};
  for (const c of CONTROLLERS) {
    const u = c.toUpperCase();
    const [queue, dlq, timers] = [env[`QUEUE_URL_${u}`], env[`DLQ_URL_${u}`], env[`TIMER_QUEUE_URL_${u}`]];
    if (queue !== undefined && dlq !== undefined && timers !== undefined) out[c] = { queue, dlq, timers };
  }
  return out;
}

/** {@link KeyQueue} over SQS FIFO. */
export class SqsKeyQueue implements KeyQueue {
  readonly retry: RetryPolicy;
  private readonly client: SQSClient;
  private readonly prefix: string;
  private readonly known = new Map<Controller, Promise<SqsQueueUrls>>();
  private readonly visibilitySeconds: number;
  private readonly now: () => number;
  /** SentTimestamp of what this client holds in flight: the only age SQS lets us compute. */
  private readonly held = new Map<string, { controller: Controller; sent: number }>();

  constructor(opts: SqsKeyQueueOptions) {
    this.client = opts.client;
    this.prefix = opts.prefix;
    this.retry = opts.retry ?? DEFAULT_RETRY;
    const needed = receivesToExhaust(this.retry);
    if (needed > SQS_MAX_RECEIVE_COUNT - REDRIVE_MARGIN) {
      throw new InvalidInputError(
        'retry',
        `policy ${JSON.stringify(this.retry)} takes ${needed} SQS receives to reach its dead-letter window, more than SQS's redrive allows (${SQS_MAX_RECEIVE_COUNT} less ${REDRIVE_MARGIN}): raise maxDelayMs or lower deadLetterAfterMs`,
      );
    }
    this.visibilitySeconds = opts.visibilityTimeoutSeconds ?? 300;
    this.now = opts.clock ?? Date.now;
    for (const [c, u] of Object.entries(opts.urls ?? {})) this.known.set(c as Controller, Promise.resolve(u));
  }

  /** Creates the queues (tests, local use; production queues come from infra/aws). Idempotent. */
  async ensureQueues(controllers: readonly Controller[] = CONTROLLERS): Promise<void> {
    for (const c of controllers) {
      const n = queueNames(this.prefix, c);
      const dlq = await this.create(n.dlq, { FifoQueue: 'true', MessageRetentionPeriod: '1209600' });
      const arn = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }));
      const queue = await this.create(n.queue, {
        FifoQueue: 'true',
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
        VisibilityTimeout: String(this.visibilitySeconds),
        // The controller's wake delay (shared/controllers.ts): a FIFO queue delays every message alike.
        DelaySeconds: String(wakeDelayMs(c) / 1000),
        // A backstop only: our own retry dead-letters (with a reason) first, and so does receive
        // for a key whose consumer dies every time (see abandoned()). At SQS's maximum so that it
        // never undercuts the policy's window (SQS_MAX_RECEIVE_COUNT).
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn.Attributes?.QueueArn, maxReceiveCount: SQS_MAX_RECEIVE_COUNT }),
      });
      const timers = await this.create(n.timers, {});
      this.known.set(c, Promise.resolve({ queue, dlq, timers }));
    }
  }

  async send(messages: readonly KeyMessage[]): Promise<void> {
    const checked = messages.map((m) => checkKeyMessage(m));
    for (const c of CONTROLLERS) {
      const mine = checked.filter((m) => m.controller === c).map((m) => ({ m, body: JSON.stringify(m) }));
      for (const chunk of sendBatches(mine)) {
        const out = await this.client.send(
          new SendMessageBatchCommand({
            QueueUrl: (await this.urls(c)).queue,
            Entries: chunk.map(({ m, body }, j) => ({ Id: String(j), MessageBody: body, MessageGroupId: m.key, MessageDeduplicationId: dedupId(m) })),
          }),
        );
        if ((out.Failed ?? []).length > 0) throw new TransientError('QueueSendFailed', `SQS refused ${out.Failed?.length} message(s): ${out.Failed?.[0]?.Message}`);
      }
    }
  }

  /** Sends a raw body as it is (how a malformed message can arrive). */
  async sendRaw(controller: Controller, body: string, groupId: string = randomUUID()): Promise<void> {
    await this.client.send(
      new SendMessageCommand({ QueueUrl: (await this.urls(controller)).queue, MessageBody: body, MessageGroupId: groupId, MessageDeduplicationId: sha(body) }),
    );
  }

  async receive(controller: Controller, max: number, waitMs: number): Promise<ReceivedKey[]> {
    const deadline = Date.now() + waitMs;
    const url = (await this.urls(controller)).queue;
    for (;;) {
      const out = await this.client.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: Math.max(1, Math.min(10, max)),
          WaitTimeSeconds: Math.min(20, Math.max(0, Math.ceil((deadline - Date.now()) / 1000))),
          VisibilityTimeout: this.visibilitySeconds,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const { keys, malformed } = groupReceived((out.Messages ?? []).map(fromSdk));
      for (const m of malformed) await this.deadLetter(controller, m.receipt, { reason: 'MalformedMessage', message: m.why });
      const live: ReceivedKey[] = [];
      for (const k of keys) {
        const gone = this.abandoned(k.received);
        if (gone !== undefined) await this.deadLetter(controller, k.received.receipt, gone);
        else live.push(k.received);
      }
      for (const rk of live) this.held.set(rk.receipt, { controller, sent: rk.enqueuedAt });
      if (live.length > 0 || Date.now() >= deadline) return live;
    }
  }

  get leaseMs(): number {
    return this.visibilitySeconds * 1000;
  }

  /**
   * A delivery to dead-letter instead of handing out, with its failure: a key received so often,
   * for so long, that its consumers must keep dying on it (a Lambda killed at its timeout: our
   * code never sees that failure, only SQS's receive count). Every earlier receive of a message
   * still on the queue ended without a settle or in a retry, so `attempt - 1` failures; the rule is
   * the retry's, with the window lengthened by one capped backoff and one lease, so a key whose
   * last retry came just inside the window still gets the attempt that retry scheduled. Also
   * called by the Lambda batch handler (shared/queue/lambda-batch.ts), which receives through the trigger.
   */
  abandoned(received: ReceivedKey): { reason: string; message: string } | undefined {
    const since = received.firstFailureAt ?? received.enqueuedAt;
    const slack = Math.min(this.retry.maxDelayMs, MAX_VISIBILITY_SECONDS * 1000) + this.leaseMs;
    const now = this.now();
    if (!retriesExhausted(this.retry, received.attempt - 1, since + slack, now)) return undefined;
    return { reason: 'LeaseExpired', message: `received ${received.attempt} times over ${Math.round((now - since) / 1000)} s, never settled or retried past the policy's window` };
  }

  async extendLease(controller: Controller, receipt: string): Promise<boolean> {
    const r = decodeReceipt(receipt);
    const out = await this.client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: (await this.urls(controller)).queue,
        Entries: r.h.map((h, i) => ({ Id: String(i), ReceiptHandle: h, VisibilityTimeout: this.visibilitySeconds })),
      }),
    );
    // A handle whose message was received again since (its visibility ran out) is refused.
    return (out.Failed ?? []).length === 0;
  }

  async ack(controller: Controller, receipt: string): Promise<void> {
    await this.delete((await this.urls(controller)).queue, decodeReceipt(receipt).h);
    this.held.delete(receipt);
  }

  async retryLater(controller: Controller, receipt: string, failure: { reason: string; message: string }): Promise<{ deadLettered: boolean; delayMs: number }> {
    const r = decodeReceipt(receipt);
    // r.a: this key's receives since its messages were sent, each one failed (a success deletes
    // them); r.f: its first receive, when the run of failures began. Past maxAttempts alone the key
    // keeps retrying at the capped backoff until the window has passed too.
    if (retriesExhausted(this.retry, r.a, r.f, this.now())) {
      await this.deadLetter(controller, receipt, failure);
      return { deadLettered: true, delayMs: 0 };
    }
    // SQS counts visibility in whole seconds; 0 would make the key visible at once.
    const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(backoffMs(this.retry, r.a) / 1000)));
    await this.client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: (await this.urls(controller)).queue,
        Entries: r.h.map((h, i) => ({ Id: String(i), ReceiptHandle: h, VisibilityTimeout: seconds })),
      }),
    );
    this.held.delete(receipt);
    return { deadLettered: false, delayMs: seconds * 1000 };
  }

  /**
   * Hands a received key back unreconciled: visible again at once (a Lambda batch that ran out of
   * time for it; shared/queue/lambda-batch.ts). Its next receive counts one more on the message,
   * as any redelivery does.
   */
  async handBack(controller: Controller, receipt: string): Promise<void> {
    const r = decodeReceipt(receipt);
    await this.client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: (await this.urls(controller)).queue,
        Entries: r.h.map((h, i) => ({ Id: String(i), ReceiptHandle: h, VisibilityTimeout: 0 })),
      }),
    );
    this.held.delete(receipt);
  }

  async requeueAfter(controller: Controller, receipt: string, seconds: number): Promise<void> {
    const r = decodeReceipt(receipt);
    const u = await this.urls(controller);
    const t = newTimer(parseKeyMessage(r.b), seconds, this.now());
    // Timer first, delete second: a crash in between gives a duplicate, never a lost key.
    await this.client.send(new SendMessageCommand({ QueueUrl: u.timers, MessageBody: t.body, DelaySeconds: t.delaySeconds }));
    await this.delete(u.queue, r.h);
    this.held.delete(receipt);
  }

  async deadLetter(controller: Controller, receipt: string, failure: { reason: string; message: string }): Promise<void> {
    const r = decodeReceipt(receipt);
    const u = await this.urls(controller);
    await this.toDlq(u.dlq, r, failure);
    await this.delete(u.queue, r.h);
    this.held.delete(receipt);
  }

  async depth(controller: Controller): Promise<QueueDepth> {
    const u = await this.urls(controller);
    const [q, d, t] = await Promise.all([u.queue, u.dlq, u.timers].map((url) => this.counts(url)));
    const now = this.now();
    const sent = [...this.held.values()].filter((h) => h.controller === controller).map((h) => h.sent);
    return {
      controller,
      visible: q!.visible,
      inFlight: q!.notVisible,
      delayed: q!.delayed + t!.visible + t!.notVisible + t!.delayed,
      deadLettered: d!.visible + d!.notVisible,
      oldestAgeSeconds: sent.length === 0 ? 0 : Math.max(0, (now - Math.min(...sent)) / 1000),
    };
  }

  async listDeadLetters(filter: { controller?: Controller; key?: string } = {}): Promise<DeadLetter[]> {
    const out: DeadLetter[] = [];
    for (const c of filter.controller === undefined ? CONTROLLERS : [filter.controller]) {
      await this.scanDlq(c, async (dl) => {
        if (filter.key === undefined || dl.key === filter.key) out.push(dl);
        return 'keep';
      });
    }
    return out;
  }

  async replay(filter: ReplayFilter): Promise<ReplayReport> {
    const moved: { controller: Controller; key: string }[] = [];
    const skipped: { controller: Controller; key: string; why: string }[] = [];
    for (const c of filter.controller === undefined ? CONTROLLERS : [filter.controller]) {
      const u = await this.urls(c);
      await this.scanDlq(c, async (dl, messageId) => {
        if (filter.key !== undefined && dl.key !== filter.key) return 'keep';
        if (filter.max !== undefined && moved.length >= filter.max) return 'keep';
        let msg: KeyMessage;
        try {
          msg = parseKeyMessage(dl.body);
        } catch (err) {
          skipped.push({ controller: c, key: dl.key, why: (err as Error).message });
          return 'keep';
        }
        moved.push({ controller: c, key: dl.key });
        if (filter.dryRun === true) return 'keep';
        // Send, then delete. Deduplicated by the DLQ message id, so a replay interrupted between
        // the two and run again does not enqueue the key twice.
        await this.client.send(
          new SendMessageCommand({
            QueueUrl: u.queue,
            MessageBody: JSON.stringify(recause(msg, 'REPLAY', this.now())),
            MessageGroupId: msg.key,
            MessageDeduplicationId: sha(`replay\n${messageId}`),
          }),
        );
        return 'delete';
      });
    }
    return { moved, skipped };
  }

  /**
   * Runs the timer forwarder once over the timer queues (local use and tests; on AWS a Lambda does
   * it). As the Lambda's partial batch response: a timer whose send failed stays on its queue and
   * comes back after its visibility timeout, the others are deleted; the first failure is thrown
   * once every queue has been pumped.
   */
  async pumpTimers(controllers: readonly Controller[] = CONTROLLERS): Promise<number> {
    let forwarded = 0;
    let failed: unknown;
    for (const c of controllers) {
      const u = await this.urls(c);
      for (;;) {
        const out = await this.client.send(new ReceiveMessageCommand({ QueueUrl: u.timers, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
        const msgs = out.Messages ?? [];
        if (msgs.length === 0) break;
        const done: string[] = [];
        for (const m of msgs) {
          const plan = planTimer(m.Body ?? '', this.now());
          try {
            await applyTimerPlan(this.client, async () => u, plan);
          } catch (err) {
            failed ??= err;
            continue;
          }
          done.push(m.ReceiptHandle ?? '');
          if (plan.kind === 'forward') forwarded++;
        }
        await this.delete(u.timers, done);
      }
    }
    if (failed !== undefined) throw failed;
    return forwarded;
  }

  async close(): Promise<void> {
    this.held.clear();
  }

  // --- internals ---

  private urls(c: Controller): Promise<SqsQueueUrls> {
    let p = this.known.get(c);
    if (p === undefined) {
      const n = queueNames(this.prefix, c);
      const url = async (name: string): Promise<string> => (await this.client.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? '';
      p = Promise.all([url(n.queue), url(n.dlq), url(n.timers)]).then(([queue, dlq, timers]) => ({ queue, dlq, timers }));
      p.catch(() => this.known.delete(c));
      this.known.set(c, p);
    }
    return p;
  }

  private async create(name: string, attributes: Record<string, string>): Promise<string> {
    return (await this.client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl ?? '';
  }

  private async delete(url: string, handles: readonly string[]): Promise<void> {
    for (let i = 0; i < handles.length; i += 10) {
      await this.client.send(
        new DeleteMessageBatchCommand({ QueueUrl: url, Entries: handles.slice(i, i + 10).map((h, j) => ({ Id: String(j), ReceiptHandle: h })) }),
      );
    }
  }

  private async toDlq(dlqUrl: string, r: SqsReceipt, failure: { reason: string; message: string }): Promise<void> {
    let key = '';
    try {
      key = parseKeyMessage(r.b).key;
    } catch {
      // malformed body: its own group
    }
    const now = this.now();
    const num = (v: number): { DataType: string; StringValue: string } => ({ DataType: 'Number', StringValue: String(v) });
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: r.b,
        MessageGroupId: key === '' ? `malformed-${sha(r.b).slice(0, 16)}` : key,
        MessageDeduplicationId: sha(`${r.b}\n${now}\n${randomUUID()}`),
        MessageAttributes: {
          reason: { DataType: 'String', StringValue: failure.reason },
          message: { DataType: 'String', StringValue: failure.message.slice(0, 1024) || '-' },
          attempts: num(r.a),
          firstFailureAt: num(r.f),
          lastFailureAt: num(now),
        },
      }),
    );
  }

  /**
   * Walks a DLQ: receives what it can, lets `visit` keep or delete each dead letter, then makes
   * the kept ones visible again. A FIFO DLQ locks a group while one of its messages is held, so
   * a walk sees the head of each group (docs/queue.md: one dead letter per key is listed).
   */
  private async scanDlq(c: Controller, visit: (dl: DeadLetter, messageId: string) => Promise<'keep' | 'delete'>): Promise<void> {
    const url = (await this.urls(c)).dlq;
    const kept: string[] = [];
    try {
      for (;;) {
        const out = await this.client.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }),
        );
        const msgs = out.Messages ?? [];
        if (msgs.length === 0) break;
        const gone: string[] = [];
        for (const m of msgs) {
          ((await visit(toDeadLetter(c, m), m.MessageId ?? '')) === 'delete' ? gone : kept).push(m.ReceiptHandle ?? '');
        }
        await this.delete(url, gone);
      }
    } finally {
      for (let i = 0; i < kept.length; i += 10) {
        await this.client.send(
          new ChangeMessageVisibilityBatchCommand({ QueueUrl: url, Entries: kept.slice(i, i + 10).map((h, j) => ({ Id: String(j), ReceiptHandle: h, VisibilityTimeout: 0 })) }),
        );
      }
    }
  }

  private async counts(url: string): Promise<{ visible: number; notVisible: number; delayed: number }> {
    const a = (
      await this.client.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      )
    ).Attributes ?? {};
    const n = (k: string): number => Number(a[k as keyof typeof a] ?? 0);
    return { visible: n('ApproximateNumberOfMessages'), notVisible: n('ApproximateNumberOfMessagesNotVisible'), delayed: n('ApproximateNumberOfMessagesDelayed') };
  }
}

function fromSdk(m: Message): ReturnType<typeof toSqsReceived> {
  return toSqsReceived({ messageId: m.MessageId ?? '', receiptHandle: m.ReceiptHandle ?? '', body: m.Body ?? '', attributes: m.Attributes ?? {} });
}

function toDeadLetter(controller: Controller, m: Message): DeadLetter {
  const attr = (k: string): string | undefined => m.MessageAttributes?.[k]?.StringValue;
  const body = m.Body ?? '';
  let key = '';
  try {
    key = parseKeyMessage(body).key;
  } catch {
    // malformed: no key
  }
  const sent = Number(m.Attributes?.SentTimestamp ?? 0);
  return {
    controller,
    key,
    body,
    // Without our attributes the message came through SQS's own redrive (maxReceiveCount).
    reason: attr('reason') ?? 'MaxReceiveCountExceeded',
    message: attr('message') ?? 'moved by the queue redrive policy',
    attempts: Number(attr('attempts') ?? m.Attributes?.ApproximateReceiveCount ?? 0),
    firstFailureAt: Number(attr('firstFailureAt') ?? sent),
    lastFailureAt: Number(attr('lastFailureAt') ?? sent),
  };
}

/**
 * How many receives a key that fails every time takes to be dead-lettered under `policy`: each
 * retry waits at least a second on SQS (visibility is counted in whole seconds).
 */
export function receivesToExhaust(policy: RetryPolicy): number {
  let elapsedMs = 0;
  for (let attempt = 1; attempt <= SQS_MAX_RECEIVE_COUNT; attempt++) {
    if (retriesExhausted(policy, attempt, 0, elapsedMs)) return attempt;
    elapsedMs += Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(backoffMs(policy, attempt) / 1000))) * 1000;
  }
  return SQS_MAX_RECEIVE_COUNT + 1;
}

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/**
 * SendMessageBatch takes at most 10 entries and 256 KiB of bodies in all: messages that carry
 * views (shared/relay/view.ts, at most VIEW_MAX_BYTES each) are split into batches under both.
 */
export const SQS_BATCH_MAX_BYTES = 250 * 1024;

/** `entries` in order, in batches of at most 10 and SQS_BATCH_MAX_BYTES of bodies. */
export function sendBatches<E extends { readonly body: string }>(entries: readonly E[]): E[][] {
  const out: E[][] = [];
  let batch: E[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = Buffer.byteLength(e.body);
    if (batch.length > 0 && (batch.length === 10 || bytes + size > SQS_BATCH_MAX_BYTES)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}
