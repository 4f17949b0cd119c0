/**
 * Whether a benchmark row also runs on the real control plane (docs/control-plane.md), and the
 * knobs every row reads the same way: BENCH_REAL=0 skips the real lane, BENCH_REAL_ONLY=1 runs
 * only it and keeps the row's emulator figures from the last run in docs/benchmarks.json, and
 * BENCH_REAL=keep runs the emulator only and keeps the row's real figures from the last run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { binaryPath, ensureBuilt, missingToolchain } from '../../../sandbox/real/build.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';

/** Why the real lane does not run here, or undefined when it does (the binary built first if needed). */
export async function realLaneSkipped(log: (line: string) => void): Promise<string | undefined> {
  if (process.env.BENCH_REAL === '0') return 'BENCH_REAL=0';
  if (!existsSync(binaryPath()) && missingToolchain()) return missingToolchain();
  await ensureBuilt(log);
  return undefined;
}

export const realOnly = (): boolean => process.env.BENCH_REAL_ONLY === '1';

/** BENCH_REAL=keep: the emulator lane runs, and each row keeps its real control plane's figures from the last run. */
export const realKept = (): boolean => {
  const keep = process.env.BENCH_REAL === 'keep';
  if (keep && realOnly()) throw new Error('BENCH_REAL=keep and BENCH_REAL_ONLY=1 keep each other\'s figures: nothing would run; choose one');
  return keep;
};

/**
 * The row's real control plane figures from the last run (BENCH_REAL=keep), marked kept; their own
 * `measuredAt` says when. With none to keep, the row's real lane is skipped, saying why.
 */
export function previousRealFigures(file: string, out = 'docs/benchmarks.json'): Record<string, unknown> {
  const prev = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { generatedAt?: string; results?: Record<string, Record<string, unknown>> }) : {};
  const real = prev.results?.[file]?.real as Record<string, unknown> | undefined;
  if (!real || real.skipped !== undefined) return { skipped: `BENCH_REAL=keep, and the last run in ${out} has no real control plane figures of this row to keep${real?.skipped !== undefined ? ` (it skipped them: ${String(real.skipped)})` : ''}` };
  return { ...real, measuredAt: real.measuredAt ?? prev.generatedAt ?? 'unknown', kept: true };
}

/**
 * The row's figures from the last run (BENCH_REAL_ONLY=1 keeps its emulator columns), with when
 * they were measured; a one-line error when there are none.
 */
export function previousFigures(file: string): { figures: Record<string, unknown>; generatedAt: string } {
  const out = 'docs/benchmarks.json';
  const prev = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { generatedAt?: string; results?: Record<string, Record<string, unknown>> }) : {};
  const figures = prev.results?.[file];
  if (!figures) throw new Error(`BENCH_REAL_ONLY=1: no emulator figures of ${file} in ${out} to keep; run it once without BENCH_REAL_ONLY`);
  return { figures, generatedAt: String(figures.emulatorMeasuredAt ?? prev.generatedAt ?? 'unknown') };
}

/**
 * A row on the emulator, then on the real control plane (or why not) under `real`; with
 * BENCH_REAL_ONLY=1 the real lane alone, the emulator's figures kept from the last run of `file`.
 */
export async function onBothLanes(file: string, runLane: (lane: ControlPlane) => Promise<Record<string, unknown>>, log: (line: string) => void): Promise<Record<string, unknown>> {
  const real = async () => {
    if (realKept()) return previousRealFigures(file);
    const skipped = await realLaneSkipped(log);
    return skipped ? { skipped } : { ...(await runLane('real')), measuredAt: new Date().toISOString() };
  };
  if (realOnly()) {
    const prev = previousFigures(file);
    return { ...prev.figures, emulatorMeasuredAt: prev.generatedAt, real: await real() };
  }
  const emulator = await runLane('emulator');
  return { ...emulator, real: await real() };
}
