/**
 * The real lane's knobs (test/bench/support/real-lane.ts): BENCH_REAL=keep runs the emulator and
 * keeps each row's real figures from the last run, saying when they were measured; with nothing
 * to keep the row's real lane is skipped, saying why; beside BENCH_REAL_ONLY=1 it is a one-line error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { previousRealFigures, realKept } from './support/real-lane.ts';

const FILE = 'test/bench/e2e.bench.ts';

function lastRun(results: Record<string, unknown>): string {
  const out = join(mkdtempSync(join(tmpdir(), 'vr-bench-')), 'benchmarks.json');
  writeFileSync(out, JSON.stringify({ generatedAt: '2026-12-07T04:18:51.064Z', results }));
  return out;
}

test('BENCH_REAL=keep keeps the row\'s real figures from the last run, with when they were measured', () => {
  // arrange
  const out = lastRun({ [FILE]: { vmis: 1000, real: { vmis: 1000, measuredAt: '2026-12-07T05:00:00.000Z', ratios: { throughput: 1.1 } } } });
  // act
  const kept = previousRealFigures(FILE, out);
  // assert
  assert.deepEqual(kept, { vmis: 1000, measuredAt: '2026-12-07T05:00:00.000Z', ratios: { throughput: 1.1 }, kept: true });
});

test('BENCH_REAL=keep with no real figures to keep, or only a skip, skips the row\'s real lane and says why', () => {
  // arrange
  const none = lastRun({ [FILE]: { vmis: 1000 } });
  const skipped = lastRun({ [FILE]: { vmis: 1000, real: { skipped: 'BENCH_REAL=0' } } });
  // act
  const fromNone = previousRealFigures(FILE, none);
  const fromSkipped = previousRealFigures(FILE, skipped);
  // assert
  assert.match(String(fromNone.skipped), /^BENCH_REAL=keep, and the last run in .*benchmarks\.json has no real control plane figures of this row to keep$/);
  assert.match(String(fromSkipped.skipped), /\(it skipped them: BENCH_REAL=0\)$/);
});

test('BENCH_REAL=keep beside BENCH_REAL_ONLY=1 is refused: each would keep what the other runs', () => {
  // arrange
  const saved = { real: process.env.BENCH_REAL, only: process.env.BENCH_REAL_ONLY };
  process.env.BENCH_REAL = 'keep';
  process.env.BENCH_REAL_ONLY = '1';
  try {
    // act / assert
    assert.throws(() => realKept(), /BENCH_REAL=keep and BENCH_REAL_ONLY=1 keep each other's figures/);
    delete process.env.BENCH_REAL_ONLY;
    assert.equal(realKept(), true);
  } finally {
    if (saved.real === undefined) delete process.env.BENCH_REAL;
    else process.env.BENCH_REAL = saved.real;
    if (saved.only === undefined) delete process.env.BENCH_REAL_ONLY;
    else process.env.BENCH_REAL_ONLY = saved.only;
  }
});
