/**
 * A node drain and a KubeVirt upgrade under the chaos suite's faults, small enough for CI
 * (CHAOS_DRAIN_VMIS, default 4, with the cluster's migration limit lowered to 3 so that both
 * limits are reached): see run-drain-chaos.ts for what is injected and checked. `npm run chaos`
 * runs a larger one (8 VMIs, KubeVirt's default limits). CHAOS_PROGRESS=1 prints a progress line
 * every 5 s; CHAOS_LOG=<file> keeps the workers' reconcile log and the audit log (<file>.audit);
 * CHAOS_SEED pins the seed (a failure prints the one it used).
 */
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { jsonLogger } from '../../shared/metrics/log.ts';
import { drainChaosViolations, runDrainChaos } from './run-drain-chaos.ts';

test('a drain and a launcher upgrade under worker kills, duplicate deliveries ×5, 409/429/500, dropped watches and a poisoned key: never two unfinished migrations per VMI, the limits held, every VMI Running on the new launcher, the DLQ replayed', async () => {
  // arrange + act
  const log = process.env.CHAOS_LOG;
  const report = await runDrainChaos({
    vmis: Number(process.env.CHAOS_DRAIN_VMIS ?? 4),
    limits: { cluster: 3, perNode: 2 },
    phaseTimeoutMs: 150_000,
    ...(process.env.CHAOS_SEED ? { seed: Number(process.env.CHAOS_SEED) } : {}),
    ...(process.env.CHAOS_PROGRESS ? { progress: (l: string) => console.log(l) } : {}),
    ...(log ? { log: jsonLogger({}, { write: (l) => appendFileSync(log, l + '\n') }), onAudit: (a) => writeFileSync(`${log}.audit`, a.map((e) => JSON.stringify(e)).join('\n')) } : {}),
  });
  console.log(`drain chaos (seed ${report.seed}): ${report.seconds} s (drain ${report.drainSeconds} s, update ${report.updateSeconds} s), ${report.migrationsCreated} migrations, ${report.refusedEvictions} evictions refused, peak running ${report.peaks.cluster}, peak outbound ${report.peaks.perNode}; injected ${JSON.stringify(report.injected)}`);
  // assert
  assert.ok(report.injected.workerKills! > 0, `no worker was killed (seed ${report.seed}): the run proved nothing`);
  assert.ok(report.injected.duplicateDeliveries! > 0, `no duplicate delivery (seed ${report.seed})`);
  assert.equal(report.peaks.perNode, report.limits.perNode, `the per-node limit was never reached (seed ${report.seed}): the drain did not test it`);
  assert.deepEqual(drainChaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});
