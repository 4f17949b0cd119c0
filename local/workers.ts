/**
 * The local runtime's consumers: `concurrency` workers per controller, each receiving up to
 * `batchSize` keys at a time from the embedded queue (default 1), keeping their leases while it
 * works, reconciling the keys of a batch concurrently, writing their trace entries as one
 * `recordBatch`, and settling each key (ack / requeue-after / retry / dead-letter) exactly as the
 * Lambda batch handler does. A worker is one Lambda instance; a batch is one invocation.
 */
import type { Controller } from '../shared/queue/message.ts';
import type { KeyQueue, ReceivedKey } from '../shared/queue/port.ts';
import { flushTraces } from '../shared/reconcile/instrument.ts';
import { TraceBuffer, type Traces } from '../shared/state/traces.ts';
import { settle } from '../shared/queue/settle.ts';
import { isWorkerCrash } from '../shared/reconcile/worker-crash.ts';
import type { Outcome } from '../shared/reconcile/outcome.ts';
import type { Logger } from '../shared/metrics/log.ts';
import type { MetricsRegistry } from '../shared/metrics/registry.ts';
import { workqueueRetry } from '../shared/metrics/kubevirt/workqueue.ts';

export interface WorkerPoolOptions {
  readonly controller: Controller;
  readonly concurrency: number;
  readonly queue: KeyQueue;
  /** One reconcile; `traces` is the batch's buffer, where its trace entry goes. */
  readonly handle: (rk: ReceivedKey, traces?: Traces) => Promise<Outcome>;
  readonly metrics: MetricsRegistry;
  readonly log: Logger;
  /**
   * How long one receive waits for a key, ms (default 1000). A stop ends the wait at once, so
   * the length only bounds how often an idle worker asks again.
   */
  readonly pollMs?: number;
  /** Keys one worker receives and reconciles together (1–10, as a Lambda FIFO batch; default 1). */
  readonly batchSize?: number;
  /** Where a batch's trace entries are written, once per batch; without it `handle` records its own. */
  readonly traces?: Traces;
  readonly now?: () => number;
}

/** Buckets for keys per batch. */
const BATCH_BUCKETS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

export class WorkerPool {
  readonly #opts: WorkerPoolOptions;
  #running = false;
  #stopping = new AbortController();
  #loops: Promise<void>[] = [];
  #busy = 0;

  constructor(opts: WorkerPoolOptions) {
    this.#opts = opts;
  }

  /** Workers reconciling right now. */
  get busy(): number {
    return this.#busy;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = new AbortController();
    this.#loops = Array.from({ length: this.#opts.concurrency }, () => this.#loop());
  }

  /** Stops receiving; keys being reconciled finish and are settled first. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stopping.abort();
    await Promise.all(this.#loops);
  }

  /**
   * While a key is being reconciled its lease is extended every quarter of the lease, as a Lambda
   * invocation keeps its message until the function times out: only a consumer that died (stopped
   * beating) loses the key, never a live one whose reconcile is slower than the lease. Without it
   * a starved machine turns slow reconciles into failed attempts (LeaseExpired), hands the key to a
   * second worker while the first still works, and past `maxAttempts` and the retry window dead-letters a healthy key.
   */
  #heartbeat(rk: ReceivedKey): { stop(): void } {
    const { controller, queue, log } = this.#opts;
    let stopped = false;
    const timer = setInterval(() => {
      queue.extendLease(controller, rk.receipt).then(
        (held) => {
          if (!held && !stopped) log.warn('lease lost while reconciling', { controller, key: rk.message.key });
        },
        (err: unknown) => log.warn('could not extend a lease', { controller, key: rk.message.key, error: err instanceof Error ? err.message : String(err) }),
      );
    }, Math.max(10, Math.floor(queue.leaseMs / 4)));
    timer.unref();
    return {
      stop() {
        stopped = true;
        clearInterval(timer);
      },
    };
  }

  async #loop(): Promise<void> {
    const { controller, queue, log } = this.#opts;
    const max = Math.max(1, Math.min(10, Math.trunc(this.#opts.batchSize ?? 1)));
    while (this.#running) {
      let batch: ReceivedKey[];
      try {
        batch = await queue.receive(controller, max, this.#opts.pollMs ?? 1000, this.#stopping.signal);
      } catch (err) {
        log.error('queue receive failed', { controller, error: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (batch.length > 0) await this.#invoke(batch);
    }
  }

  /** One "invocation": the keys reconciled together, their traces written once, then each settled. */
  async #invoke(batch: readonly ReceivedKey[]): Promise<void> {
    const { controller, queue, metrics, log } = this.#opts;
    const now = this.#opts.now ?? Date.now;
    const started = performance.now();
    const traces = this.#opts.traces ? new TraceBuffer(this.#opts.traces) : undefined;
    this.#busy += batch.length;
    const heartbeats = batch.map((rk) => this.#heartbeat(rk));
    try {
      const ran = await Promise.all(batch.map((rk) => this.#opts.handle(rk, traces).then((outcome) => ({ outcome }), (error: unknown) => ({ error }))));
      if (traces) await flushTraces(traces, controller, log, now);
      metrics.observe('invocation_duration_seconds', 'Wall time of one batch of keys, reconciles and trace write (what Lambda bills)', { controller }, (performance.now() - started) / 1000);
      metrics.observe('invocation_keys', 'Keys reconciled together in one batch', { controller }, batch.length, BATCH_BUCKETS);
      for (const [i, rk] of batch.entries()) {
        heartbeats[i]?.stop();
        const r = ran[i]!;
        if ('error' in r && isWorkerCrash(r.error)) {
          // A crashed worker settles nothing: the key stays leased and is delivered again once
          // the visibility timeout passes (fault injection; see shared/reconcile/worker-crash.ts).
          metrics.inc('worker_crashes_total', 'Reconciles abandoned by a crashed worker', { controller });
          continue;
        }
        try {
          const result = await settle(queue, controller, rk, () => ('error' in r ? Promise.reject(r.error) : Promise.resolve(r.outcome)), { ackDone: true });
          metrics.inc('reconcile_total', 'Reconciles by result', { controller, result });
          if (result === 'retrying') {
            metrics.inc('workqueue_retries_total', 'Keys retried with backoff', { name: controller });
            workqueueRetry(metrics, controller);
          }
        } catch (err) {
          // The queue failed while settling: the key's lease expires and it is delivered again.
          log.error('could not settle key', { controller, key: rk.message.key, error: err instanceof Error ? err.message : String(err) });
        }
      }
    } finally {
      for (const h of heartbeats) h.stop();
      this.#busy -= batch.length;
    }
  }
}
