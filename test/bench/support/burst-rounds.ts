/**
 * Burst rounds (e2e.bench.ts): one burst's VMIs/s moves by ±15 % from run to run on a shared
 * machine, so each system's figure is the median of several rounds, and its detailed breakdown
 * is the run that gave that median.
 */
import { median } from './stats.ts';

/** Per system, the run with the median VMIs/s among the rounds (the lower middle of an even count). */
export function medianRuns<R extends { readonly vmisPerSecondScheduled: number }>(rounds: readonly Record<string, R>[]): Record<string, R> {
  const out: Record<string, R> = {};
  const systems = new Set(rounds.flatMap((r) => Object.keys(r)));
  for (const sys of systems) {
    const runs = rounds.map((r) => r[sys]).filter((x): x is R => x !== undefined).sort((a, b) => a.vmisPerSecondScheduled - b.vmisPerSecondScheduled);
    if (runs.length > 0) out[sys] = runs[(runs.length - 1) >> 1]!;
  }
  return out;
}

/**
 * The median of every number across `runs`, leaf by leaf, in the shape of the runs (objects
 * recurse; anything else is taken from the first run that has it): the figures a row judges by,
 * each the median of its rounds on its own rather than the figures of one median run.
 */
export function medianOfLeaves(runs: readonly unknown[]): unknown {
  const present = runs.filter((r) => r !== undefined && r !== null);
  if (present.length === 0) return undefined;
  if (present.every((r) => typeof r === 'number')) return Math.round(median(present as number[]) * 1000) / 1000;
  if (present.every((r) => typeof r === 'object' && !Array.isArray(r))) {
    const keys = new Set(present.flatMap((r) => Object.keys(r as object)));
    return Object.fromEntries([...keys].map((k) => [k, medianOfLeaves(present.map((r) => (r as Record<string, unknown>)[k]))]));
  }
  return present[0];
}

/** Per system that ran in any round, the median of each of its figures ({@link medianOfLeaves}). */
export function mediansBySystem<T>(systems: readonly string[], rounds: readonly { readonly runs: Readonly<Record<string, T>> }[]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const sys of systems) {
    const m = medianOfLeaves(rounds.map((r) => r.runs[sys]));
    if (m !== undefined) out[sys] = m as T;
  }
  return out;
}
