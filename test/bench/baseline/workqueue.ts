/**
 * client-go's rate-limited workqueue, in memory: the yardstick the serverless path is measured
 * against. Semantics kept from client-go: a key is in `dirty` until a worker takes it; while a
 * worker holds it (`processing`) new adds only mark it dirty and it is handed out again after
 * `done` (per-key serialization + coalescing); `addRateLimited` waits 5 ms doubling per
 * consecutive failure (capped) until `forget`; `addAfter` is a timer.
 */
export interface WorkqueueOptions {
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

export class RateLimitedWorkqueue<T> {
  readonly #queue: string[] = [];
  readonly #dirty = new Map<string, T>();
  readonly #processing = new Set<string>();
  /** Items added while processing: handed out again on `done`. */
  readonly #pendingWhileProcessing = new Map<string, T>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #waiters: (() => void)[] = [];
  readonly #firstAdded = new Map<string, number>();
  readonly #opts: Required<WorkqueueOptions>;
  #shutDown = false;

  constructor(opts: WorkqueueOptions = {}) {
    this.#opts = { baseDelayMs: opts.baseDelayMs ?? 5, maxDelayMs: opts.maxDelayMs ?? 1_000_000 };
  }

  get depth(): number {
    return this.#queue.length;
  }

  /** Adds (or coalesces into) `key`; the newest item wins. */
  add(key: string, item: T): void {
    if (this.#shutDown) return;
    if (this.#processing.has(key)) {
      this.#pendingWhileProcessing.set(key, item);
      return;
    }
    if (!this.#dirty.has(key)) {
      this.#queue.push(key);
      this.#firstAdded.set(key, performance.now());
    }
    this.#dirty.set(key, item);
    this.#waiters.shift()?.();
  }

  addAfter(key: string, item: T, ms: number): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      this.add(key, item);
    }, ms);
    this.#timers.add(t);
  }

  addRateLimited(key: string, item: T): void {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    this.addAfter(key, item, Math.min(this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** n));
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** Consecutive failures of `key` so far. */
  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key (waits for one); undefined once shut down. `addedAt` is performance.now() of its first add. */
  async get(): Promise<{ key: string; item: T; addedAt: number } | undefined> {
    while (this.#queue.length === 0) {
      if (this.#shutDown) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    const key = this.#queue.shift()!;
    const item = this.#dirty.get(key)!;
    const addedAt = this.#firstAdded.get(key) ?? performance.now();
    this.#dirty.delete(key);
    this.#firstAdded.delete(key);
    this.#processing.add(key);
    return { key, item, addedAt };
  }

  done(key: string): void {
    this.#processing.delete(key);
    const again = this.#pendingWhileProcessing.get(key);
    if (again !== undefined) {
      this.#pendingWhileProcessing.delete(key);
      this.add(key, again);
    }
  }

  shutDown(): void {
    this.#shutDown = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const w of this.#waiters.splice(0)) w();
  }
}
