/**
 * Which systems a benchmark row runs, and in which order per round. Three systems can run side
 * by side: the in-house `baseline`, the `serverless` runtime, and KubeVirt's own virt-controller
 * (`kubevirt`, when KUBEVIRT_VIRT_CONTROLLER names it: support/kubevirt.ts). Knobs:
 *
 * - `BENCH_SYSTEMS=serverless,kubevirt` — only these (any of baseline, serverless, kubevirt);
 * - `BENCH_KUBEVIRT_ONLY=1` — KubeVirt's alone;
 * - `BENCH_KUBEVIRT=0` — without KubeVirt's even when the binary is named.
 *
 * KubeVirt's runs by default whenever KUBEVIRT_VIRT_CONTROLLER is set; otherwise each row says
 * in one line that its KubeVirt column was skipped, and why.
 */
import { kubevirtSetup } from './kubevirt.ts';

export type SystemName = 'baseline' | 'serverless' | 'kubevirt';
export const ALL_SYSTEMS: readonly SystemName[] = ['baseline', 'serverless', 'kubevirt'];

/** The systems `row` runs of `candidates`, and why KubeVirt's does not run there (if it does not). */
export interface SystemChoice {
  readonly systems: SystemName[];
  readonly kubevirtSkipped?: string;
}

/** Parses the knobs above; a wrong name is a one-line error. */
export function chooseSystems(row: string, candidates: readonly SystemName[], log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): SystemChoice {
  let wanted: SystemName[] = [...candidates];
  if (env.BENCH_SYSTEMS?.trim()) {
    const named = env.BENCH_SYSTEMS.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = named.filter((s) => !ALL_SYSTEMS.includes(s as SystemName));
    if (unknown.length) throw new Error(`BENCH_SYSTEMS=${env.BENCH_SYSTEMS}: unknown system ${unknown.join(', ')} (expected any of ${ALL_SYSTEMS.join(', ')})`);
    wanted = wanted.filter((s) => named.includes(s));
  }
  if (env.BENCH_KUBEVIRT_ONLY === '1') wanted = wanted.filter((s) => s === 'kubevirt');
  let kubevirtSkipped: string | undefined;
  if (!candidates.includes('kubevirt')) kubevirtSkipped = undefined;
  else if (env.BENCH_KUBEVIRT === '0') kubevirtSkipped = 'BENCH_KUBEVIRT=0';
  else if (!wanted.includes('kubevirt')) kubevirtSkipped = env.BENCH_SYSTEMS ? `BENCH_SYSTEMS=${env.BENCH_SYSTEMS}` : undefined;
  else {
    const setup = kubevirtSetup(env);
    if ('skipped' in setup) kubevirtSkipped = setup.skipped;
  }
  if (kubevirtSkipped !== undefined) {
    wanted = wanted.filter((s) => s !== 'kubevirt');
    log(`${row}: KubeVirt's virt-controller skipped — ${kubevirtSkipped}`);
  }
  return { systems: wanted, ...(kubevirtSkipped !== undefined ? { kubevirtSkipped } : {}) };
}

/** The systems' order in round `i` (0-based): rotated one place per round, so each system runs in each position. */
export function roundOrder(systems: readonly SystemName[], i: number): SystemName[] {
  const k = systems.length === 0 ? 0 : i % systems.length;
  return [...systems.slice(k), ...systems.slice(0, k)];
}

/** A run that failed to start or finish: KubeVirt's is recorded and the row goes on; ours still fails the bench. */
export interface Failure {
  readonly system: SystemName;
  readonly run: string;
  readonly error: string;
}

export async function attempt<T>(system: SystemName, run: string, failures: Failure[], fn: () => Promise<T>, log: (line: string) => void = (l) => process.stdout.write(`  ${l}\n`)): Promise<T | undefined> {
  if (system !== 'kubevirt') return fn();
  try {
    return await fn();
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    log(`${system}: ${run} failed: ${error.split('\n')[0]}`);
    failures.push({ system, run, error });
    return undefined;
  }
}

/** One round: the systems' order and each one's figures (a failed KubeVirt run is absent). */
export interface Round<T> {
  readonly order: SystemName[];
  readonly runs: Record<string, T>;
}

/**
 * `rounds` rounds (at least one) of `run` on every system, the order rotating ({@link roundOrder});
 * KubeVirt's runs that fail are recorded in `failures` ({@link attempt}) and the rounds go on.
 */
export async function runRounds<T>(what: string, systems: readonly SystemName[], rounds: number, failures: Failure[], run: (sys: SystemName) => Promise<T>, log: (line: string) => void): Promise<Round<T>[]> {
  const out: Round<T>[] = [];
  for (let i = 0; i < Math.max(1, rounds); i++) {
    if (rounds > 1) log(`${what}: round ${i + 1}/${rounds}`);
    const order = roundOrder(systems, i);
    const runs: Record<string, T> = {};
    for (const sys of order) {
      const r = await attempt(sys, `${what}, round ${i + 1}`, failures, () => run(sys), log);
      if (r !== undefined) runs[sys] = r;
    }
    out.push({ order, runs });
  }
  return out;
}
