/**
 * Burst rounds (e2e.bench.ts): one burst's VMIs/s moves by ±15 % from run to run on a shared
 * machine, so each system's figure is the median of several rounds, and its detailed breakdown
 * is the run that gave that median.
 */

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
