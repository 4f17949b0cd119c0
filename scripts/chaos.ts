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
 */
import { chaosViolations, runChaos } from '../test/chaos/run-chaos.ts';
import { drainChaosViolations, runDrainChaos } from '../test/chaos/run-drain-chaos.ts';
import { replicaSetChaosViolations, runReplicaSetChaos } from '../test/chaos/run-replicaset-chaos.ts';

const vmis = Number(process.env.CHAOS_VMIS ?? 200);
const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : undefined;
const killRate = process.env.CHAOS_KILL_RATE ? Number(process.env.CHAOS_KILL_RATE) : undefined;
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
process.exitCode = violations.length || rsViolations.length || drainViolations.length ? 1 : 0;
