/**
 * The benchmarks' pause monitor (support/pauses.ts) and the p99-runs summary row (report.ts):
 * a blocked event loop shows as a stall, slow windows are matched to stalls, and the row is met
 * only when each of three pairs is within 1.3×. No benchmark runs here and nothing is timed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PauseMonitor, shareOverlapping, STALL_MS } from './support/pauses.ts';
import { p99RunsRow } from './report.ts';

describe('pause monitor', () => {
  test('a blocked event loop is recorded as a stall at least as long as the threshold', async () => {
    const m = new PauseMonitor();
    m.start();
    await new Promise((r) => setTimeout(r, 50));
    const until = Date.now() + STALL_MS * 3;
    while (Date.now() < until) {
      /* block the loop */
    }
    await new Promise((r) => setTimeout(r, 50));
    const f = m.stop();
    assert.ok(f.stalls.length >= 1, JSON.stringify(f));
    assert.ok(f.stalls[0]!.ms >= STALL_MS, JSON.stringify(f.stalls));
    assert.ok(f.stallTotalMs >= f.stalls[0]!.ms);
    assert.ok(f.loopDelayMaxMs >= STALL_MS);
  });

  test('slow windows are counted when they overlap a stall', () => {
    const stalls = [{ startMs: 1000, ms: 200 }];
    assert.equal(shareOverlapping([{ startMs: 900, endMs: 1100 }, { startMs: 1300, endMs: 1400 }], stalls), 0.5);
    assert.equal(shareOverlapping([{ startMs: 1200, endMs: 1300 }], stalls), 0);
    assert.equal(shareOverlapping([], stalls), 0);
  });
});

describe('p99 runs summary row', () => {
  test('met only when three pairs ran and each is within 1.3×', () => {
    assert.equal(p99RunsRow({ vmis: 1000, ratios: { eventToPodP99Runs: [1.1, 0.9, 1.2] } }).met, true);
    assert.equal(p99RunsRow({ vmis: 1000, ratios: { eventToPodP99Runs: [1.1, 1.46, 1.2] } }).met, false);
    const short = p99RunsRow({ vmis: 300, ratios: { eventToPodP99Runs: [1.1] } });
    assert.equal(short.met, undefined);
    assert.match(short.target, /BENCH_P99_RUNS/);
    assert.equal(p99RunsRow({}).measured, 'not run');
  });
});
