/**
 * Lambda-shaped consumers for the AWS backend's chaos runs: what the SQS trigger and the Lambda
 * runtime do, with their failure modes. Each of `concurrency` lanes receives a batch of up to 10
 * (the visibility timeout covering the function timeout), runs it through the production batch
 * handler (shared/queue/lambda-batch.ts: keys one after another, none started without time left)
 * as one "invocation", then deletes the records that did not fail — unless the invocation died:
 * - killed at its deadline: now and then (`hangRate`) one API call of the invocation hangs, as a
 *   stuck connection does, so the invocation runs out its time with part of its batch done; the
 *   runtime kills it and the trigger deletes nothing — every record comes back after the
 *   visibility timeout, the done ones too;
 * - a worker crash (the chaos Killer) kills the whole invocation the same way at once.
 * After death, every API, table and queue call of that invocation throws (the process is gone).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DeleteMessageBatchCommand, GetQueueUrlCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { processKeyBatch } from '../../shared/queue/lambda-batch.ts';
import type { Controller } from '../../shared/queue/message.ts';
import type { KeyQueue, ReceivedKey } from '../../shared/queue/port.ts';
import { queueNames } from '../../shared/queue/sqs-queue.ts';
import { decorateKubeClient } from '../../shared/kube/call-counter.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Outcome } from '../../shared/reconcile/outcome.ts';
import { isWorkerCrash, WorkerCrash } from '../../shared/reconcile/worker-crash.ts';
import { sqsRecord } from '../support/sqs-event.ts';

interface Invocation {
  dead: boolean;
  readonly deadline: number;
  /** The API call (1-based) that hangs until the deadline, or 0. */
  readonly hangAt: number;
  calls: number;
  die(): void;
}

const current = new AsyncLocalStorage<Invocation>();

/** The Kubernetes client as an invocation sees it: dead after its death, one call hanging when picked. */
export function invocationKube(inner: KubeClient): KubeClient {
  return decorateKubeClient(inner, async (method, _args, call) => {
    const inv = current.getStore();
    if (!inv) return call();
    if (inv.dead) throw new WorkerCrash(`invocation already killed (kube.${method})`);
    if (++inv.calls === inv.hangAt) {
      await new Promise((r) => setTimeout(r, Math.max(0, inv.deadline - Date.now()) + 50));
      throw new WorkerCrash(`invocation killed at its deadline during kube.${method}`);
    }
    try {
      return await call();
    } catch (err) {
      // A worker crash is the whole invocation's.
      if (isWorkerCrash(err)) inv.die();
      throw err;
    }
  });
}

export interface LambdaInvokerOptions {
  readonly client: SQSClient;
  readonly prefix: string;
  readonly controller: Controller;
  readonly queue: Pick<KeyQueue, 'ack' | 'retryLater' | 'requeueAfter' | 'deadLetter'> & { handBack?(c: Controller, receipt: string): Promise<void>; abandoned?(received: ReceivedKey): { reason: string; message: string } | undefined };
  readonly reconcile: (rk: ReceivedKey) => Promise<Outcome>;
  /** The function timeout. Default 6 s (above the batch handler's 5 s reserve). */
  readonly timeoutMs?: number;
  readonly concurrency?: number;
  readonly random: () => number;
  /** Probability per invocation that one of its API calls hangs past the deadline. Default 0.2. */
  readonly hangRate?: number;
}

/** Invocations run, killed at the deadline (with how many keys they had settled), and killed by a crash. */
export interface InvokerCounts {
  invocations: number;
  killedAtDeadline: number;
  keysDoneInKilledBatches: number;
  killedByCrash: number;
}

export class LambdaInvoker {
  readonly counts: InvokerCounts = { invocations: 0, killedAtDeadline: 0, keysDoneInKilledBatches: 0, killedByCrash: 0 };
  readonly #o: LambdaInvokerOptions;
  #running = false;
  #lanes: Promise<void>[] = [];

  constructor(opts: LambdaInvokerOptions) {
    this.#o = opts;
  }

  start(): void {
    this.#running = true;
    this.#lanes = Array.from({ length: this.#o.concurrency ?? 4 }, () => this.#lane());
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#lanes);
  }

  async #lane(): Promise<void> {
    const o = this.#o;
    const queueName = queueNames(o.prefix, o.controller).queue;
    let queueUrl = '';
    // The trigger's own set-up retries through the injected faults.
    while (!queueUrl && this.#running) {
      queueUrl = await o.client.send(new GetQueueUrlCommand({ QueueName: queueName })).then((r) => r.QueueUrl ?? '', () => '');
    }
    const timeoutMs = o.timeoutMs ?? 6000;
    while (this.#running) {
      let messages;
      try {
        messages = (await o.client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: Math.ceil(timeoutMs / 1000) + 2, MessageSystemAttributeNames: ['All'] }))).Messages ?? [];
      } catch {
        continue; // the trigger's poll failed (an injected fault): it polls again
      }
      if (messages.length === 0) continue;
      this.counts.invocations++;
      const event: SQSEvent = { Records: messages.map((m) => sqsRecord(m, queueName)) };
      let died!: () => void;
      const death = new Promise<'died'>((r) => (died = () => r('died')));
      const inv: Invocation = { dead: false, deadline: Date.now() + timeoutMs, hangAt: o.random() < (o.hangRate ?? 0.2) ? 1 + Math.floor(o.random() * 12) : 0, calls: 0, die: () => ((inv.dead = true), died()) };
      // The queue as the invocation reaches it: nothing after its death.
      const alive = <A extends unknown[], R>(f: (...a: A) => Promise<R>) => (...a: A): Promise<R> => (inv.dead ? Promise.reject(new WorkerCrash('invocation already killed (queue)')) : f(...a));
      const queue = { ack: alive(o.queue.ack.bind(o.queue)), retryLater: alive(o.queue.retryLater.bind(o.queue)), requeueAfter: alive(o.queue.requeueAfter.bind(o.queue)), deadLetter: alive(o.queue.deadLetter.bind(o.queue)), ...(o.queue.handBack ? { handBack: alive(o.queue.handBack.bind(o.queue)) } : {}), ...(o.queue.abandoned ? { abandoned: o.queue.abandoned.bind(o.queue) } : {}) };
      let settled = 0;
      const work = current.run(inv, () =>
        processKeyBatch(event, { controller: o.controller, queue, maxInFlight: 1, remainingMs: () => inv.deadline - Date.now(), reconcile: o.reconcile, onSettled: () => void settled++ }),
      );
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref());
      const first = await Promise.race([work, timer, death]);
      if (first === 'timeout' || first === 'died') {
        if (first === 'timeout') {
          this.counts.killedAtDeadline++;
          this.counts.keysDoneInKilledBatches += settled;
        } else this.counts.killedByCrash++;
        inv.die();
        // The runtime is gone: nothing is deleted; every record comes back after its visibility.
        void work.catch(() => undefined);
        continue;
      }
      const failed = new Set(first.batchItemFailures.map((f) => f.itemIdentifier));
      const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
      // The trigger deletes what succeeded; a delete that fails leaves the record to come back.
      for (let i = 0; i < done.length; i += 10) {
        const chunk = done.slice(i, i + 10);
        await o.client.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle ?? '' })) })).catch(() => undefined);
      }
    }
  }
}
