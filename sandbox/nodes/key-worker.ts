/**
 * A tiny work queue in the client-go shape: keys are deduplicated while they wait, one key is
 * never handled by two workers at once, a key added while it is being handled runs again
 * afterwards, and a failed key is retried with per-key exponential backoff (real time, because
 * an API error is not simulated time: with a frozen clock a 409 must still be retried).
 */

/** Handles one key; throw to retry with backoff. */
export type KeyHandler = (key: string) => Promise<void>;

export interface KeyWorkerOptions {
  /** Parallel workers; default 2. */
  concurrency?: number;
  /** First retry delay in real ms; doubles up to 2 s. Default 20. */
  retryBaseMs?: number;
  /** Told about every failed attempt (for logs). */
  onError?: (key: string, err: unknown) => void;
}

export class KeyWorker {
  readonly #handle: KeyHandler;
  readonly #concurrency: number;
  readonly #retryBaseMs: number;
  readonly #onError: ((key: string, err: unknown) => void) | undefined;
  // Waiting keys, oldest first from #head: a key waits here only while no worker holds it (one
  // added while held is marked dirty instead), so the oldest can always be taken — in O(1), where
  // taking from the front of an array moved all 10,000 keys of a burst.
  #queue: string[] = [];
  #head = 0;
  readonly #queued = new Set<string>();
  readonly #active = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #retryTimers = new Map<string, NodeJS.Timeout>();
  readonly #idleWaiters: (() => void)[] = [];
  #running = 0;
  #stopped = false;

  constructor(handle: KeyHandler, opts: KeyWorkerOptions = {}) {
    this.#handle = handle;
    this.#concurrency = opts.concurrency ?? 2;
    this.#retryBaseMs = opts.retryBaseMs ?? 20;
    this.#onError = opts.onError;
  }

  /** Queues a key (no-op while it already waits). */
  add(key: string): void {
    if (this.#stopped) return;
    if (this.#active.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** Stops taking work and waits for the keys in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#retryTimers.values()) clearTimeout(t);
    this.#retryTimers.clear();
    this.#queue = [];
    this.#head = 0;
    this.#queued.clear();
    if (this.#running > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  #pump(): void {
    while (!this.#stopped && this.#running < this.#concurrency) {
      if (this.#head >= this.#queue.length) return;
      const key = this.#queue[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.#queued.delete(key);
      this.#active.add(key);
      this.#running++;
      void this.#run(key);
    }
  }

  async #run(key: string): Promise<void> {
    try {
      await this.#handle(key);
      this.#failures.delete(key);
    } catch (err) {
      this.#onError?.(key, err);
      this.#retryLater(key);
    } finally {
      this.#active.delete(key);
      this.#running--;
      if (this.#dirty.delete(key)) this.add(key);
      if (this.#running === 0 && this.#stopped) this.#idleWaiters.splice(0).forEach((w) => w());
      this.#pump();
    }
  }

  #retryLater(key: string): void {
    if (this.#stopped || this.#retryTimers.has(key)) return;
    const n = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, n);
    const delay = Math.min(this.#retryBaseMs * 2 ** (n - 1), 2000);
    const t = setTimeout(() => {
      this.#retryTimers.delete(key);
      this.add(key);
    }, delay);
    t.unref();
    this.#retryTimers.set(key, t);
  }
}
