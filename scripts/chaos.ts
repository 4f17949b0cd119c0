/**
 * `npm run chaos`: a 200-VMI chaos run (CHAOS_VMIS, CHAOS_SEED, CHAOS_KILL_RATE) against the
 * sandbox cluster — worker kills, duplicate deliveries, dropped watches and 410s, 429/500/409
 * from the API server, a slow queue, poison messages (see test/chaos/run-chaos.ts). Then a replica
 * set scaled 20 → 60 → 10 → 40 under the same faults, with VMIs deleted by hand on the way
 * (test/chaos/run-replicaset-chaos.ts; CHAOS_RS_STEPS=a,b,c overrides the steps). Prints what
 * was injected and checked; exits 1 on any lost key, duplicate pod, unreplayable poison, or a
 * replica set with more live VMIs than spec.replicas or not reaching it. Last, a node drain and a
 * launcher upgrade of CHAOS_DRAIN_VMIS (default 8) VMIs under the same faults, at KubeVirt's
 * default migration limits (test/chaos/run-drain-chaos.ts).
 *
 * The runs need nothing beyond `npm ci` (the sandbox cluster and the embedded SQLite queue and
 * table), so a fresh clone runs it as it is. A run that cannot run (a crash) says why in one line
 * and the others go on; the exit code is 1 then too.
 */
import { chaosViolations, runChaos } from '../test/chaos/run-chaos.ts';
import { drainChaosViolations, runDrainChaos } from '../test/chaos/run-drain-chaos.ts';
import { replicaSetChaosViolations, runReplicaSetChaos } from '../test/chaos/run-replicaset-chaos.ts';

/** Runs one part; a part that throws is one line and counts as failed, and the next part runs. */
let couldNotRun = 0;
async function part(name: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    couldNotRun++;
    process.stderr.write(`chaos: ${name} could not run: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
    return 0;
  }
}

const vmis = Number(process.env.CHAOS_VMIS ?? 200);
const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : undefined;
const killRate = process.env.CHAOS_KILL_RATE ? Number(process.env.CHAOS_KILL_RATE) : undefined;
const violations = await part('the VMI run', async () => {
  process.stdout.write(`chaos: ${vmis} VMIs${seed !== undefined ? `, seed ${seed}` : ''}\n`);
  const report = await runChaos({ vmis, ...(seed !== undefined ? { seed } : {}), ...(killRate !== undefined ? { killRate } : {}), progress: (l) => process.stdout.write(`  ${l}\n`) });
  const violations = chaosViolations(report);
  process.stdout.write(
    [
      `seed ${report.seed}, ${report.seconds} s`,
      `injected: ${Object.entries(report.injected).map(([k, v]) => `${k} ${v}`).join(', ')}`,
      `Scheduled: ${report.vmis - report.lost.length}/${report.vmis} (lost ${report.lost.length})`,
      `duplicate launcher pods: ${report.duplicatePods.length}`,
      `DLQ: ${report.deadLetters.map((d) => `${d.key || '(malformed)'} [${d.reason}]`).join(', ')}`,
      `replay: moved ${report.replay.moved.map((m) => m.key).join(', ') || 'nothing'}; skipped ${report.replay.skipped.length} (${report.replay.skipped.map((s) => s.why).join('; ')})`,
      `poison key Scheduled after replay: ${report.poisonRecovered}`,
      violations.length ? `FAILED:\n  - ${violations.join('\n  - ')}` : 'PASSED: 0 lost keys, 0 duplicate pods, poison dead-lettered with reasons and replayed',
    ].join('\n') + '\n',
  );
  return violations.length;
});
const rsViolations = await part('the replica set run', async () => {
  const steps = (process.env.CHAOS_RS_STEPS ?? '20,60,10,40').split(',').map(Number);
  process.stdout.write(`chaos: replica set scaled ${steps.join(' → ')}\n`);
  const rs = await runReplicaSetChaos({ steps, handDeletes: 3, ...(seed !== undefined ? { seed } : {}), ...(killRate !== undefined ? { killRate } : {}), progress: (l) => process.stdout.write(`  ${l}\n`) });
  const rsViolations = replicaSetChaosViolations(rs);
  process.stdout.write(
    [
      `seed ${rs.seed}, ${rs.seconds} s, ${rs.auditEntries} audit entries replayed`,
      `injected: ${Object.entries(rs.injected).map(([k, v]) => `${k} ${v}`).join(', ')}`,
      rsViolations.length ? `FAILED:\n  - ${rsViolations.join('\n  - ')}` : 'PASSED: never more live VMIs than spec.replicas at any audit-log instant; every step reached exactly',
    ].join('\n') + '\n',
  );
  return rsViolations.length;
});
const drainViolations = await part('the drain and upgrade run', async () => {
  const drainVmis = Number(process.env.CHAOS_DRAIN_VMIS ?? 8);
  process.stdout.write(`chaos: drain and upgrade of ${drainVmis} VMIs\n`);
  const drain = await runDrainChaos({ vmis: drainVmis, phaseTimeoutMs: 300_000, ...(seed !== undefined ? { seed } : {}), ...(killRate !== undefined ? { killRate } : {}), progress: (l) => process.stdout.write(`  ${l}\n`) });
  const drainViolations = drainChaosViolations(drain);
  process.stdout.write(
    [
      `seed ${drain.seed}, ${drain.seconds} s (drain ${drain.drainSeconds} s, update ${drain.updateSeconds} s), ${drain.migrationsCreated} migrations, peaks ${drain.peaks.cluster} running / ${drain.peaks.perNode} outbound`,
      `injected: ${Object.entries(drain.injected).map(([k, v]) => `${k} ${v}`).join(', ')}`,
      drainViolations.length ? `FAILED:\n  - ${drainViolations.join('\n  - ')}` : 'PASSED: no VMI with two unfinished migrations, the limits held, every VMI Running on the new launcher, outdated count 0, only the poison dead-lettered and replayed',
    ].join('\n') + '\n',
  );
  return drainViolations.length;
});
process.exitCode = violations || rsViolations || drainViolations || couldNotRun ? 1 : 0;
// A part that failed half-way may have left a server holding the event loop open.
if (couldNotRun > 0) process.exit(1);
