/**
 * The one long-running holder of virt-controller's Lease (docs/cutover.md): runs in the relay (the
 * relay's Deployment on AWS, the local runtime's process). Every retry period it reads the Lease
 * and, while it names us, renews it — after a `takeover` written by the CLI and while handing
 * back, until `handback` releases it. It never takes a Lease someone else holds: only `up` (when
 * the Lease is free) and `takeover` do. When we become the writer it calls `onWritable` (the
 * relay re-sends every key).
 */
import type { Logger } from '../metrics/log.ts';
import { errorText } from '../errors.ts';
import { writeModeOf } from './gate.ts';
import { isHeldLive, type LeaseClient } from './lease.ts';

export interface LeaseKeeperOptions {
  readonly lease: LeaseClient;
  readonly log: Logger;
  /** Take the Lease whenever it is free or expired, as a standby candidate does (default false). */
  readonly candidate?: boolean;
  /** Called once each time we become the writer. */
  readonly onWritable?: () => void;
  /** Called after each read with whether we hold the Lease (not handing back). */
  readonly onHolding?: (holding: boolean) => void;
  readonly now?: () => number;
}

export class LeaseKeeper {
  readonly #opts: LeaseKeeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #writable = false;
  /** When our last renewal succeeded (epoch ms). */
  #renewedAt: number | undefined;
  #holding: boolean | undefined;
  #ticking: Promise<void> | undefined;
  #wakeAt: NodeJS.Timeout | undefined;

  constructor(opts: LeaseKeeperOptions) {
    this.#opts = opts;
  }

  /** We hold the Lease (renewed by us, not being handed back); undefined before the first read. */
  get holding(): boolean | undefined {
    return this.#holding;
  }

  /** We hold the Lease and the old leader's renew deadline has passed. */
  get writable(): boolean {
    return this.#writable;
  }

  start(): void {
    if (this.#timer) return;
    void this.tick();
    this.#timer = setInterval(() => void this.tick(), this.#opts.lease.timings.retryPeriodSeconds * 1000);
    this.#timer.unref();
  }

  stop(): Promise<void> {
    clearInterval(this.#timer);
    clearTimeout(this.#wakeAt);
    this.#timer = undefined;
    return this.#ticking ?? Promise.resolve();
  }

  /** One read (and renewal when ours). Exposed for tests and for `up`'s first acquisition. */
  tick(): Promise<void> {
    this.#ticking ??= this.#tick().finally(() => (this.#ticking = undefined));
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    const { lease, log } = this.#opts;
    const now = (this.#opts.now ?? Date.now)();
    try {
      let { view } = await lease.read();
      if (this.#opts.candidate && view.holder !== lease.identity && !isHeldLive(view, now) && (await lease.acquire()).acquired) view = (await lease.read()).view;
      const ours = view.holder === lease.identity;
      const renewed = ours ? await lease.renew() : false;
      // Renewed after the Lease had lapsed (a stalled process): the functions dropped keys as
      // fenced meanwhile, so this counts as becoming the writer anew and every key is re-sent —
      // as client-go's leader, having lost its Lease, exits and lists everything when it leads again.
      if (renewed && this.#renewedAt !== undefined && now - this.#renewedAt >= lease.timings.leaseDurationSeconds * 1000) this.#writable = false;
      if (renewed) this.#renewedAt = now;
      this.#setHolding(renewed && !view.handingBack);
      const writable = renewed && writeModeOf({ ...view, renewedAt: now }, lease.identity, false, now, lease.timings) === 'write';
      if (writable && !this.#writable) {
        log.info('virt-controller lease: we are the writer', { identity: lease.identity, namespace: lease.namespace });
        this.#opts.onWritable?.();
      }
      this.#writable = writable;
      // The takeover wait ends between two ticks: look again right then, not up to a period later.
      if (renewed && !writable && view.writableAfter !== undefined && view.writableAfter > now && !view.handingBack) {
        clearTimeout(this.#wakeAt);
        this.#wakeAt = setTimeout(() => void this.tick(), view.writableAfter - now + 10);
        this.#wakeAt.unref();
      }
    } catch (err) {
      // A failed read or renewal: the functions stop writing at our renew deadline by themselves.
      log.warn('virt-controller lease: could not read or renew', { error: errorText(err) });
    }
  }

  #setHolding(holding: boolean): void {
    if (holding === this.#holding) return;
    this.#holding = holding;
    this.#opts.onHolding?.(holding);
  }
}
