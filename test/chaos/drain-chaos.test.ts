/**
 * A node drain and a KubeVirt upgrade under the chaos suite's faults, small enough for CI: see
 * run-drain-chaos.ts for what is injected and checked. `npm run chaos` runs a larger one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendFileSync, writeFileSync } from 'node:fs';
import { jsonLogger } from '../../shared/metrics/log.ts';
import { drainChaosViolations, runDrainChaos } from './run-drain-chaos.ts';

/**
 * Opt-in (CHAOS_DRAIN=1) until it is reliable: it passed in 131 s once and, in the next run on the
 * same machine, did not finish within 400 s (cause not found yet; docs/evacuation-controller.md).
 */
const OPT_IN = process.env.CHAOS_DRAIN === '1' ? false : 'opt-in (CHAOS_DRAIN=1): one of two runs did not finish in 400 s, cause not found yet';

test('a drain and a launcher upgrade under worker kills, duplicate deliveries ×5, 409/429/500, dropped watches and a poisoned key: never two unfinished migrations per VMI, the limits held, every VMI Running on the new launcher, the DLQ replayed', { skip: OPT_IN }, async () => {
  // arrange + act
  const report = await runDrainChaos({ vmis: Number(process.env.CHAOS_DRAIN_VMIS ?? 8), phaseTimeoutMs: 150_000, ...(process.env.CHAOS_PROGRESS ? { progress: (l: string) => console.log(l) } : {}), ...(process.env.CHAOS_LOG ? { log: jsonLogger({}, { write: (l) => appendFileSync(process.env.CHAOS_LOG!, l + '\n') }), onAudit: (a) => writeFileSync(`${process.env.CHAOS_LOG}.audit`, a.map((e) => JSON.stringify(e)).join('\n')) } : {}) });
  console.log(`drain chaos (seed ${report.seed}): ${report.seconds} s (drain ${report.drainSeconds} s, update ${report.updateSeconds} s), ${report.migrationsCreated} migrations, ${report.refusedEvictions} evictions refused, peak running ${report.peaks.cluster}, peak outbound ${report.peaks.perNode}; injected ${JSON.stringify(report.injected)}`);
  // assert
  assert.ok(report.injected.workerKills! > 0, `no worker was killed (seed ${report.seed}): the run proved nothing`);
  assert.ok(report.injected.duplicateDeliveries! > 0, `no duplicate delivery (seed ${report.seed})`);
  assert.deepEqual(drainChaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});
