/**
 * The relay's outbox: keys waiting to be sent, coalesced per controller key (the newest cause
 * wins — the function re-reads current state anyway), flushed in batches. A failed send keeps
 * the keys and retries with backoff; nothing is dropped. Memory is bounded by the number of
 * distinct keys, not by the event rate.
 */
import type { KeyQueue } from '../../shared/queue/port.ts';
import type { KeyMessage } from '../../shared/queue/message.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { errorText } from '../../shared/errors.ts';

export interface OutboxOptions {
  readonly batchSize?: number;
  /**
   * How long the first key waits for company before a flush, ms. Default 0: a key goes out on
   * the next tick (events of one watch chunk still share a batch), and while a send is in flight
   * new keys gather for the next one — batches grow only under load, so an idle relay adds no
   * latency.
   */
  readonly lingerMs?: number;
  readonly maxBackoffMs?: number;
  readonly log: Logger;
  /**
   * Completes a message as it goes out (the relay attaches its view, computed from the watches'
   * state at that moment: a key that waited gets the newest state, not the one of its event).
   */
  readonly decorate?: (message: KeyMessage) => KeyMessage;
  readonly onSent?: (messages: readonly KeyMessage[]) => void;
  readonly onSendError?: (err: unknown) => void;
}

export class Outbox {
  readonly #queue: Pick<KeyQueue, 'send'>;
  readonly #opts: OutboxOptions;
  readonly #pending = new Map<string, KeyMessage>();
  /** Entries held back until an epoch ms (ControllerView.holdMs); absent when not held. */
  readonly #notBefore = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #timerDelay = 0;
  #flushing: Promise<void> | undefined;
  #failures = 0;
  #closed = false;
  #failingSince: number | undefined;
  lastSendOkAt = 0;

  constructor(queue: Pick<KeyQueue, 'send'>, opts: OutboxOptions) {
    this.#queue = queue;
    this.#opts = opts;
  }

  get depth(): number {
    return this.#pending.size;
  }

  /** Consecutive failed sends (0 after a success). */
  get failures(): number {
    return this.#failures;
  }

  /** Epoch ms of the first failed send since the last success; undefined while sends succeed. */
  get failingSince(): number | undefined {
    return this.#failingSince;
  }

  /**
   * Queues `msg` for sending, in place of a pending one of the same key. `holdMs` > 0 holds it
   * back that long, unless a message of the key without a hold replaces it first.
   */
  add(msg: KeyMessage, holdMs = 0): void {
    const id = `${msg.controller}|${msg.key}`;
    this.#pending.set(id, msg);
    if (holdMs > 0) this.#notBefore.set(id, Date.now() + holdMs);
    else this.#notBefore.delete(id);
    if (this.#pending.size >= (this.#opts.batchSize ?? 100)) this.#schedule(0);
    else this.#schedule(holdMs > 0 ? holdMs : (this.#opts.lingerMs ?? 0));
  }

  #schedule(delayMs: number): void {
    if (this.#flushing || this.#closed) return;
    if (this.#timer) {
      if (delayMs > 0 || this.#timerDelay === 0) return;
      clearTimeout(this.#timer);
    }
    this.#timerDelay = delayMs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flushLoop().finally(() => {
        this.#flushing = undefined;
        if (this.#pending.size > 0 && !this.#closed) this.#schedule(this.#failures ? this.#backoff() : this.#untilNextDue());
      });
    }, delayMs);
  }

  async #flushLoop(): Promise<void> {
    const size = this.#opts.batchSize ?? 100;
    while (this.#pending.size > 0) {
      const now = Date.now();
      const batch = [...this.#pending.entries()].filter(([k]) => (this.#notBefore.get(k) ?? 0) <= now).slice(0, size);
      if (batch.length === 0) return;
      const decorate = this.#opts.decorate ?? ((m: KeyMessage) => m);
      try {
        const out = batch.map(([, m]) => decorate(m));
        await this.#queue.send(out);
        this.#failures = 0;
        this.#failingSince = undefined;
        this.lastSendOkAt = Date.now();
        // Only remove what was sent: a newer cause that arrived meanwhile stays for the next batch.
        for (const [k, m] of batch) {
          if (this.#pending.get(k) !== m) continue;
          this.#pending.delete(k);
          this.#notBefore.delete(k);
        }
        this.#opts.onSent?.(out);
      } catch (err) {
        this.#failures++;
        this.#failingSince ??= Date.now();
        this.#opts.onSendError?.(err);
        this.#opts.log.warn('queue send failed; keys kept for retry', { error: errorText(err), pending: this.#pending.size, attempt: this.#failures });
        return;
      }
    }
  }

  /** ms until the earliest held entry may go (0 when one not held is pending). */
  #untilNextDue(): number {
    let next = Infinity;
    for (const k of this.#pending.keys()) next = Math.min(next, this.#notBefore.get(k) ?? 0);
    return Math.max(0, next - Date.now());
  }

  #backoff(): number {
    return Math.min(this.#opts.maxBackoffMs ?? 10_000, 50 * 2 ** Math.min(this.#failures, 10));
  }

  /** Sends what is pending (retrying until `deadlineMs` passes), then stops. */
  async close(deadlineMs = 10_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    clearTimeout(this.#timer);
    await this.#flushing;
    this.#notBefore.clear(); // nothing waits any more: everything goes now
    while (this.#pending.size > 0 && Date.now() < until) {
      await this.#flushLoop();
      if (this.#pending.size > 0) await new Promise((r) => setTimeout(r, Math.min(this.#backoff(), Math.max(0, until - Date.now()))));
    }
    this.#closed = true;
    if (this.#pending.size > 0) this.#opts.log.warn('relay stopped with unsent keys; the next start relists and re-sends them', { pending: this.#pending.size });
  }
}
