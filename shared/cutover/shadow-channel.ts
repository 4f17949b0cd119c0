/**
 * Shadow mode on AWS (docs/cutover.md, "On AWS"): the decisions are made in the Lambda functions,
 * the judge needs the watch, which runs in the relay. The functions send each decision (and each
 * "settled" mark, shadow-recorder.ts `settled`) to one SQS FIFO queue, `<prefix>-shadow.fifo`,
 * grouped by controller and key so a key's marks arrive in the order they were made; the relay
 * receives them and hands them to its {@link ShadowRecorder}, which judges them against its watch
 * and writes divergences to the state table (divergence-store.ts `DynamoDbDivergences`).
 *
 * A decision, not the whole dry-run write, crosses the queue: the fields it would set and its
 * target (a launcher pod's decision is a few KB; SQS takes 256 KiB). One that does not fit is
 * dropped on the sending side with a warning and counted (`shadow_decisions_unsent_total`): shadow
 * mode must never fail or slow a reconcile.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { errorText } from '../errors.ts';
import type { Logger } from '../metrics/log.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import type { CutoverHooks } from '../reconcile/instrument.ts';
import { decisionOf, describeTarget, type Decision } from './decision.ts';
import type { ShadowRecorder } from './shadow-recorder.ts';

/** The environment variable naming the queue (the functions send, the relay receives). */
export const SHADOW_QUEUE_ENV = 'SHADOW_QUEUE_URL';

/** SQS's largest message body. */
const MAX_BODY_BYTES = 256 * 1024;

/** One mark on the channel. `at`: epoch ms, the sender's wall clock. */
export type ShadowMessage =
  | { readonly v: 1; readonly kind: 'decision'; readonly controller: string; readonly key: string; readonly at: number; readonly decision: Decision }
  | { readonly v: 1; readonly kind: 'settled'; readonly controller: string; readonly key: string; readonly startedAt: number };

/** Parses a message body; throws an Error saying what is wrong with it. */
export function parseShadowMessage(body: string): ShadowMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    throw new Error('not JSON');
  }
  const m = raw as Partial<Record<string, unknown>>;
  if (typeof raw !== 'object' || raw === null || m.v !== 1) throw new Error(`not a shadow message (v ${JSON.stringify(m?.v)})`);
  if (typeof m.controller !== 'string' || typeof m.key !== 'string' || m.controller === '' || m.key === '') throw new Error('controller and key must be non-empty strings');
  if (m.kind === 'settled') {
    if (typeof m.startedAt !== 'number' || !Number.isFinite(m.startedAt)) throw new Error('settled: startedAt must be a number');
    return { v: 1, kind: 'settled', controller: m.controller, key: m.key, startedAt: m.startedAt };
  }
  if (m.kind === 'decision') {
    const d = m.decision as Partial<Decision> | undefined;
    if (typeof m.at !== 'number' || !Number.isFinite(m.at)) throw new Error('decision: at must be a number');
    if (!d || typeof d.write !== 'string' || typeof d.target?.kind !== 'string' || typeof d.target.resource?.plural !== 'string' || (d.expectation?.kind !== 'gone' && d.expectation?.kind !== 'fields')) {
      throw new Error('decision: write, target (kind, resource) and expectation are required');
    }
    return { v: 1, kind: 'decision', controller: m.controller, key: m.key, at: m.at, decision: d as Decision };
  }
  throw new Error(`unknown kind ${JSON.stringify(m.kind)}`);
}

export interface SqsShadowChannelOptions {
  readonly client: SQSClient;
  readonly url: string;
  readonly log: Logger;
  readonly metrics?: MetricsRegistry;
}

/** The functions' side: sends marks; never throws (a lost mark is logged and counted). */
export class SqsShadowChannel {
  readonly #o: SqsShadowChannelOptions;

  constructor(o: SqsShadowChannelOptions) {
    this.#o = o;
  }

  async send(m: ShadowMessage): Promise<boolean> {
    const body = JSON.stringify(m);
    const unsent = (why: string) => {
      this.#o.metrics?.inc('shadow_decisions_unsent_total', 'Shadow marks the functions could not send to the relay', { controller: m.controller });
      this.#o.log.warn('shadow decision not sent to the relay', { controller: m.controller, key: m.key, why });
      return false;
    };
    if (Buffer.byteLength(body) > MAX_BODY_BYTES) return unsent(`${Buffer.byteLength(body)} bytes, over SQS's ${MAX_BODY_BYTES}`);
    try {
      await this.#o.client.send(new SendMessageCommand({ QueueUrl: this.#o.url, MessageBody: body, MessageGroupId: `${m.controller}/${m.key}`, MessageDeduplicationId: randomUUID() }));
      return true;
    } catch (err) {
      return unsent(errorText(err));
    }
  }
}

/**
 * The functions' shadow hooks: each decision logged (one line) and, with a channel, sent to the
 * relay's judge; each settled mark sent too. Awaited by the reconcile, never failing it.
 */
export function channelHooks(channel: SqsShadowChannel | undefined, log: Logger, metrics: MetricsRegistry): Pick<CutoverHooks, 'record' | 'settled'> {
  return {
    record: async (controller, key, w) => {
      metrics.inc('shadow_writes_total', 'Dry-run writes made in shadow mode', { controller });
      const d = decisionOf(w);
      if (!d) return;
      log.info('shadow decision', { controller, key, write: d.write, object: describeTarget(d.target) });
      await channel?.send({ v: 1, kind: 'decision', controller, key, at: Date.now(), decision: d });
    },
    settled: async (controller, key, startedAt) => {
      await channel?.send({ v: 1, kind: 'settled', controller, key, startedAt });
    },
  };
}

export interface ShadowPumpOptions {
  readonly client: SQSClient;
  readonly url: string;
  readonly recorder: Pick<ShadowRecorder, 'recordDecision' | 'settled'>;
  readonly log: Logger;
  readonly metrics?: MetricsRegistry;
  /** Long-poll wait per receive, s (default 10). */
  readonly waitSeconds?: number;
}

/**
 * The relay's side: receives marks and hands them to the recorder, deleting each once handed (a
 * malformed one is logged, counted and deleted: it can never be judged). Runs until stopped.
 */
export class ShadowPump {
  readonly #o: ShadowPumpOptions;
  #running = false;
  #loop: Promise<void> | undefined;
  #abort: AbortController | undefined;
  /** Marks handed to the recorder, and malformed ones dropped. */
  readonly counts = { received: 0, malformed: 0 };

  constructor(o: ShadowPumpOptions) {
    this.#o = o;
  }

  /** Receives until {@link stop}; a second call while running does nothing. */
  start(): void {
    this.#running = true;
    this.#loop ??= this.#run().finally(() => (this.#loop = undefined));
  }

  /** Ends the long poll in flight and waits for the loop to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#abort?.abort();
    await this.#loop;
  }

  /** One receive and its hand-over; answers how many marks it handed. */
  async once(waitSeconds = this.#o.waitSeconds ?? 10): Promise<number> {
    this.#abort = new AbortController();
    const out = await this.#o.client.send(new ReceiveMessageCommand({ QueueUrl: this.#o.url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds, VisibilityTimeout: 60 }), { abortSignal: this.#abort.signal });
    const done: string[] = [];
    let handed = 0;
    for (const msg of out.Messages ?? []) {
      let m: ShadowMessage;
      try {
        m = parseShadowMessage(msg.Body ?? '');
      } catch (err) {
        this.counts.malformed++;
        this.#o.metrics?.inc('shadow_marks_malformed_total', 'Malformed messages on the shadow queue, dropped');
        this.#o.log.warn('shadow queue: malformed message dropped', { error: errorText(err), body: (msg.Body ?? '').slice(0, 200) });
        done.push(msg.ReceiptHandle ?? '');
        continue;
      }
      if (m.kind === 'decision') this.#o.recorder.recordDecision(m.controller, m.key, m.decision, m.at);
      else this.#o.recorder.settled(m.controller, m.key, m.startedAt);
      this.counts.received++;
      handed++;
      done.push(msg.ReceiptHandle ?? '');
    }
    for (let i = 0; i < done.length; i += 10) {
      await this.#o.client.send(new DeleteMessageBatchCommand({ QueueUrl: this.#o.url, Entries: done.slice(i, i + 10).map((h, j) => ({ Id: String(j), ReceiptHandle: h })) }));
    }
    return handed;
  }

  async #run(): Promise<void> {
    let backoff = 500;
    while (this.#running) {
      try {
        await this.once();
        backoff = 500;
      } catch (err) {
        if (!this.#running) return;
        this.#o.log.warn('shadow queue: receive failed, retrying', { error: errorText(err), retryInMs: backoff });
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }
}
