/**
 * What stops a process for a while: the event loop's delay (node:perf_hooks' histogram), V8's
 * garbage-collection pauses (PerformanceObserver 'gc' entries) and the stalls themselves — each
 * time a 20 ms tick came more than STALL_MS late, with its wall time — so that a latency run's
 * slowest VMIs can be set beside what their processes were doing when they were created.
 */
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

type IntervalHistogram = ReturnType<typeof monitorEventLoopDelay>;

/** A tick this much later than due counts as a stall. */
export const STALL_MS = 100;
const TICK_MS = 20;

/** One stall: the loop was blocked (or starved) from `startMs` for `ms` (wall clock, epoch ms). */
export interface Stall {
  readonly startMs: number;
  readonly ms: number;
}

export interface PauseFigures {
  seconds: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  gcCount: number;
  gcPauseTotalMs: number;
  gcPauseMaxMs: number;
  /** GC pauses of 50 ms or more. */
  gcLongPauses: number;
  /** Mark-compact (major) collections and their pause total. */
  gcMajorCount: number;
  gcMajorPauseTotalMs: number;
  /** Stalls of STALL_MS or more, longest first (at most 500). */
  stalls: Stall[];
  stallTotalMs: number;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

export class PauseMonitor {
  #hist: IntervalHistogram | undefined;
  #obs: PerformanceObserver | undefined;
  #tick: NodeJS.Timeout | undefined;
  #gc: number[] = [];
  #gcMajor: number[] = [];
  #stalls: Stall[] = [];
  #startedAt = 0;

  start(): void {
    this.#startedAt = Date.now();
    this.#hist = monitorEventLoopDelay({ resolution: 10 });
    this.#hist.enable();
    this.#obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.#gc.push(e.duration);
        if (((e as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.#gcMajor.push(e.duration);
      }
    });
    this.#obs.observe({ entryTypes: ['gc'] });
    let due = Date.now() + TICK_MS;
    this.#tick = setInterval(() => {
      const now = Date.now();
      const late = now - due;
      if (late >= STALL_MS) this.#stalls.push({ startMs: due, ms: late });
      due = now + TICK_MS;
    }, TICK_MS);
    this.#tick.unref();
  }

  stop(): PauseFigures {
    const h = this.#hist;
    h?.disable();
    this.#obs?.disconnect();
    if (this.#tick) clearInterval(this.#tick);
    const ms = (ns: number | undefined) => r1((ns ?? 0) / 1e6);
    const stalls = [...this.#stalls].sort((a, b) => b.ms - a.ms);
    return {
      seconds: r1((Date.now() - this.#startedAt) / 1000),
      loopDelayP50Ms: ms(h?.percentile(50)),
      loopDelayP99Ms: ms(h?.percentile(99)),
      loopDelayMaxMs: ms(h?.max),
      gcCount: this.#gc.length,
      gcPauseTotalMs: r1(this.#gc.reduce((a, b) => a + b, 0)),
      gcPauseMaxMs: r1(Math.max(0, ...this.#gc)),
      gcLongPauses: this.#gc.filter((d) => d >= 50).length,
      gcMajorCount: this.#gcMajor.length,
      gcMajorPauseTotalMs: r1(this.#gcMajor.reduce((a, b) => a + b, 0)),
      stalls: stalls.slice(0, 500).map((s) => ({ startMs: s.startMs, ms: Math.round(s.ms) })),
      stallTotalMs: Math.round(stalls.reduce((a, s) => a + s.ms, 0)),
    };
  }
}

/** The share of `slow` events (epoch ms windows [startMs, endMs]) that overlap one of `stalls`. */
export function shareOverlapping(slow: readonly { startMs: number; endMs: number }[], stalls: readonly Stall[]): number {
  if (slow.length === 0) return 0;
  const hit = slow.filter((w) => stalls.some((s) => s.startMs < w.endMs && s.startMs + s.ms > w.startMs)).length;
  return Math.round((hit / slow.length) * 100) / 100;
}
