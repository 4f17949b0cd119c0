/**
 * The local runtime's consumers: `concurrency` workers per controller, each receiving one key at
 * a time from the embedded queue, keeping its lease while it works, and settling it (ack /
 * requeue-after / retry / dead-letter) exactly as the Lambda batch handler does.
 */
import type { Controller } from '../../shared/queue/message.ts';
import type { KeyQueue, ReceivedKey } from '../../shared/queue/port.ts';
import { settle } from '../../shared/queue/settle.ts';
import { isWorkerCrash } from '../../shared/reconcile/worker-crash.ts';
import type { Outcome } from '../../shared/reconcile/outcome.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { MetricsRegistry } from '../../shared/metrics/registry.ts';

export interface WorkerPoolOptions {
  readonly controller: Controller;
  readonly concurrency: number;
  readonly queue: KeyQueue;
  readonly handle: (rk: ReceivedKey) => Promise<Outcome>;
  readonly metrics: MetricsRegistry;
  readonly log: Logger;
  /** How long one receive waits for a key, ms. */
  readonly pollMs?: number;
}

export class WorkerPool {
  readonly #opts: WorkerPoolOptions;
  #running = false;
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
    this.#loops = Array.from({ length: this.#opts.concurrency }, () => this.#loop());
  }

  /** Stops receiving; keys being reconciled finish and are settled first. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  /**
   * While a key is being reconciled its lease is extended every quarter of the lease, as a Lambda
   * invocation keeps its message until the function times out: only a consumer that died (stopped
   * beating) loses the key, never a live one whose reconcile is slower than the lease. Without it
   * a starved machine turns slow reconciles into failed attempts (LeaseExpired), hands the key to a
   * second worker while the first still works, and after `maxAttempts` dead-letters a healthy key.
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
    const { controller, queue, metrics, log } = this.#opts;
    while (this.#running) {
      let batch: ReceivedKey[];
      try {
        batch = await queue.receive(controller, 1, this.#opts.pollMs ?? 250);
      } catch (err) {
        log.error('queue receive failed', { controller, error: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      for (const rk of batch) {
        this.#busy++;
        const heartbeat = this.#heartbeat(rk);
        try {
          const ran = await this.#opts.handle(rk).then((outcome) => ({ outcome }), (error: unknown) => ({ error }));
          heartbeat.stop();
          if ('error' in ran && isWorkerCrash(ran.error)) {
            // A crashed worker settles nothing: the key stays leased and is delivered again once
            // the visibility timeout passes (fault injection; see shared/reconcile/worker-crash.ts).
            metrics.inc('worker_crashes_total', 'Reconciles abandoned by a crashed worker', { controller });
            continue;
          }
          const result = await settle(queue, controller, rk, () => ('error' in ran ? Promise.reject(ran.error) : Promise.resolve(ran.outcome)), { ackDone: true });
          metrics.inc('reconcile_total', 'Reconciles by result', { controller, result });
          if (result === 'retrying') metrics.inc('workqueue_retries_total', 'Keys retried with backoff', { name: controller });
        } catch (err) {
          // The queue failed while settling: the key's lease expires and it is delivered again.
          log.error('could not settle key', { controller, key: rk.message.key, error: err instanceof Error ? err.message : String(err) });
        } finally {
          heartbeat.stop();
          this.#busy--;
        }
      }
    }
  }
}
