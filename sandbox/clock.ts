/**
 * The sandbox cluster's clock: one notion of "now" shared by the API server emulator
 * (timestamps, graceful deletion) and the simulated node side (scheduler, kubelet, virt-handler).
 *
 * Simulated time runs at `speed` × real time (speed 10 makes a 30 s grace period pass in 3 real
 * seconds; speed 0 freezes time, and only {@link Clock.advance} moves it). Timers are expressed in
 * simulated milliseconds and fire in due order, so a test can drive everything deterministically
 * with `speed: 0` + `advance()`.
 */

/** Opaque handle returned by {@link Clock.setTimeout}. */
export interface ClockTimer {
  readonly id: number;
  /** Simulated epoch milliseconds at which the callback runs. */
  readonly dueMs: number;
}

/** A controllable clock. All durations are simulated milliseconds. */
export interface Clock {
  /** Simulated epoch milliseconds. */
  nowMs(): number;
  /** Simulated now as a Date. */
  now(): Date;
  /** RFC 3339 with second precision and `Z`, as the Kubernetes API writes timestamps. */
  isoNow(): string;
  /** Runs `fn` once `ms` simulated milliseconds have passed. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer | undefined): void;
  /** Resolves after `ms` simulated milliseconds. */
  sleep(ms: number): Promise<void>;
  /** Current speed factor (simulated ms per real ms); 0 means frozen. */
  readonly speed: number;
  setSpeed(speed: number): void;
  /** Jumps simulated time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void;
  /** Number of timers not yet fired (for tests and shutdown checks). */
  pending(): number;
  /** Cancels every pending timer; the clock stays usable. */
  dispose(): void;
}

/** Options of {@link createClock}. */
export interface ClockOptions {
  /** Simulated ms per real ms; default 1 (real time). 0 freezes time. */
  speed?: number;
  /** Simulated start time; default the real current time. */
  start?: Date | number;
}

interface Entry {
  id: number;
  dueMs: number;
  seq: number;
  fn: () => void;
}

/** Creates a clock; see {@link Clock}. */
export function createClock(options: ClockOptions = {}): Clock {
  let speed = checkSpeed(options.speed ?? 1);
  const start = options.start === undefined ? Date.now() : +options.start;
  let anchorReal = performance.now();
  let anchorSim = start;
  let nextId = 1;
  let seq = 0;
  const timers: Entry[] = [];
  let realTimer: NodeJS.Timeout | undefined;

  const nowMs = (): number => anchorSim + (performance.now() - anchorReal) * speed;

  const reanchor = (): void => {
    anchorSim = nowMs();
    anchorReal = performance.now();
  };

  // Why one real timer: speed changes and advance() must re-plan every pending timer, which is
  // trivial when only the earliest one is armed.
  // The entry the real timer is armed for: a timer set or cleared behind it leaves the real timer
  // as it is. Re-armed on every call, each real timer had a delay of its own (the time left to a
  // far-off entry), and Node keeps a cleared timer's list until that delay has passed — an hour's
  // soak held 25,000 of them (docs/reliability.md, "The soak").
  let armedFor: Entry | undefined;
  const arm = (replan = false): void => {
    const first = timers[0];
    if (!replan && realTimer && first === armedFor) return;
    if (realTimer) clearTimeout(realTimer);
    realTimer = undefined;
    armedFor = undefined;
    if (!first || speed === 0) return;
    const realDelay = Math.max(0, (first.dueMs - nowMs()) / speed);
    armedFor = first;
    realTimer = setTimeout(fireDue, Math.min(realDelay, 2 ** 31 - 1));
    // A pending simulated timer must never keep a test process alive on its own.
    realTimer.unref();
  };

  const fireDue = (): void => {
    // Called by the real timer, or by advance() with the real timer still pending.
    if (realTimer) clearTimeout(realTimer);
    realTimer = undefined;
    armedFor = undefined;
    const t = nowMs();
    while (timers.length > 0 && timers[0]!.dueMs <= t) {
      const e = timers.shift()!;
      try {
        e.fn();
      } catch (err) {
        // A failing callback must not stop other timers; surface it like Node would.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    arm();
  };

  const clock: Clock = {
    nowMs,
    now: () => new Date(nowMs()),
    isoNow: () => new Date(Math.floor(nowMs() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    setTimeout(fn, ms) {
      const e: Entry = { id: nextId++, dueMs: nowMs() + Math.max(0, ms), seq: seq++, fn };
      const at = timers.findIndex((x) => x.dueMs > e.dueMs);
      if (at < 0) timers.push(e);
      else timers.splice(at, 0, e);
      arm();
      return { id: e.id, dueMs: e.dueMs };
    },
    clearTimeout(timer) {
      if (!timer) return;
      const i = timers.findIndex((x) => x.id === timer.id);
      if (i >= 0) timers.splice(i, 1);
      arm();
    },
    sleep(ms) {
      return new Promise((resolve) => clock.setTimeout(resolve, ms));
    },
    get speed() {
      return speed;
    },
    setSpeed(next) {
      reanchor();
      speed = checkSpeed(next);
      arm(true);
    },
    advance(ms) {
      reanchor();
      anchorSim += Math.max(0, ms);
      fireDue();
    },
    pending: () => timers.length,
    dispose() {
      timers.length = 0;
      arm();
    },
  };
  return clock;
}

function checkSpeed(speed: number): number {
  if (!Number.isFinite(speed) || speed < 0) throw new RangeError(`clock speed must be >= 0, got ${speed}`);
  return speed;
}
