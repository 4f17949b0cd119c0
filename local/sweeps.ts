/**
 * The local runtime's schedule for the controllers' sweeps (shared/reconcile/sweep.ts): what
 * EventBridge Scheduler does on AWS, an embedded timer per registry entry with a `sweep`. Every
 * `periodSeconds` of the controller's clock (divided by `clockSpeed` on a sped-up sandbox) it puts
 * the controller's sweep message on the embedded queue, stamped with that clock's time; the
 * controller's workers expand it. A send that fails is logged and the next period sends again.
 */
import { sweeps as registrySweeps } from '../shared/controllers.ts';
import type { Logger } from '../shared/metrics/log.ts';
import type { Controller } from '../shared/queue/message.ts';
import type { KeyQueue } from '../shared/queue/port.ts';
import { sweepMessage } from '../shared/reconcile/sweep.ts';

export interface SweepTimerOptions {
  readonly queue: Pick<KeyQueue, 'send'>;
  readonly log: Pick<Logger, 'warn'>;
  /** Epoch ms on the controllers' clock. */
  readonly now: () => number;
  /** Simulated ms per wall-clock ms of `now`. */
  readonly clockSpeed?: number | undefined;
}

/** One wall-clock interval per sweep; `stop()` clears them. */
export class SweepTimers {
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #opts: SweepTimerOptions;

  constructor(opts: SweepTimerOptions) {
    this.#opts = opts;
  }

  /** The wall-clock period of each sweep, ms. */
  periods(): { controller: Controller; everyMs: number }[] {
    return registrySweeps().map(({ controller, sweep }) => ({ controller, everyMs: Math.max(10, (sweep.periodSeconds * 1000) / (this.#opts.clockSpeed ?? 1)) }));
  }

  start(): void {
    if (this.#timers.length > 0) return;
    for (const { controller, everyMs } of this.periods()) {
      const t = setInterval(() => void this.fire(controller), everyMs);
      t.unref();
      this.#timers.push(t);
    }
  }

  /** Sends one sweep of `controller` now (the timer's tick; tests call it too). */
  async fire(controller: Controller): Promise<void> {
    try {
      await this.#opts.queue.send([sweepMessage(controller, this.#opts.now())]);
    } catch (err) {
      this.#opts.log.warn('sweep not sent', { controller, error: err instanceof Error ? err.message : String(err) });
    }
  }

  stop(): void {
    for (const t of this.#timers.splice(0)) clearInterval(t);
  }
}
