/**
 * `npm run chaos`: a 200-VMI chaos run (CHAOS_VMIS, CHAOS_SEED, CHAOS_KILL_RATE) against the
 * sandbox cluster — worker kills, duplicate deliveries, dropped watches and 410s, 429/500/409
 * from the API server, a slow queue, poison messages (see test/chaos/run-chaos.ts). Prints what
 * was injected and checked; exits 1 on any lost key, duplicate pod or unreplayable poison.
 */
import { chaosViolations, runChaos } from '../test/chaos/run-chaos.ts';

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
process.exitCode = violations.length ? 1 : 0;
