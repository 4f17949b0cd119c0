/**
 * "Has this step taken long enough yet?" for the storage agents: a step's delay counts from the
 * moment its preconditions first held (like real work taking that long), on the sandbox clock,
 * and a clock timer re-queues the key when it is due. Same idea as virt-handler's `due`.
 */
import type { Clock, ClockTimer } from '../clock.ts';

export class StepDelays {
  readonly #clock: Clock;
  readonly #wake: (key: string) => void;
  readonly #since = new Map<string, number>();
  readonly #timers = new Map<string, ClockTimer>();

  constructor(clock: Clock, wake: (key: string) => void) {
    this.#clock = clock;
    this.#wake = wake;
  }

  /** True once `delayMs` simulated ms have passed since `step` of `key` first became due; else arms a wake-up. */
  due(key: string, step: string, delayMs: number): boolean {
    const id = `${key}#${step}`;
    let start = this.#since.get(id);
    if (start === undefined) this.#since.set(id, (start = this.#clock.nowMs()));
    const at = start + delayMs;
    if (this.#clock.nowMs() >= at) {
      this.#since.delete(id);
      return true;
    }
    this.wakeAt(key, at);
    return false;
  }

  /** Re-queues `key` at `atMs` (the earliest of the wake-ups asked for wins). */
  wakeAt(key: string, atMs: number): void {
    const existing = this.#timers.get(key);
    if (existing && existing.dueMs <= atMs) return;
    this.#clock.clearTimeout(existing);
    this.#timers.set(
      key,
      this.#clock.setTimeout(() => {
        this.#timers.delete(key);
        this.#wake(key);
      }, Math.max(0, atMs - this.#clock.nowMs())),
    );
  }

  /** Forgets every step of `key` (the object is gone). */
  forget(key: string): void {
    for (const id of [...this.#since.keys()]) if (id.startsWith(`${key}#`)) this.#since.delete(id);
    this.#clock.clearTimeout(this.#timers.get(key));
    this.#timers.delete(key);
  }

  stop(): void {
    for (const t of this.#timers.values()) this.#clock.clearTimeout(t);
    this.#timers.clear();
  }
}
