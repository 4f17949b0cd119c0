/**
 * The chaos suite, small enough for CI (CHAOS_TEST_VMIS, default 40): see run-chaos.ts for what
 * is injected. `npm run chaos` runs the 200-VMI version.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chaosViolations, runChaos } from './run-chaos.ts';

test('under worker kills, duplicate deliveries, watch drops/410, 429/500/409, a slow queue and poison: no lost key, no duplicate pod, poison in the DLQ and replayed', async () => {
  // arrange + act
  const report = await runChaos({ vmis: Number(process.env.CHAOS_TEST_VMIS ?? 40), timeoutMs: 180_000 });
  process.stdout.write(`# seed ${report.seed}, ${report.seconds} s; deliveries ${JSON.stringify(report.deliveries)}; DLQ before the replay: ${report.deadLetters.map((d) => `${d.key || '(malformed)'} ${d.reason} ×${d.attempts}`).join(', ')}\n`);
  // assert
  assert.ok(report.injected.workerKills! > 0, `no worker was killed (seed ${report.seed}): the run proved nothing`);
  assert.ok(report.injected.duplicateDeliveries! > 0, `no duplicate delivery (seed ${report.seed})`);
  assert.deepEqual(chaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});

test('on a starved machine (every API call 400 ms slower, reconciles outlasting the 1.5 s lease) under the same chaos: live workers keep their keys, nothing is dead-lettered by slowness', async () => {
  // arrange + act
  const report = await runChaos({ vmis: 10, apiDelayMs: 400, killRate: 0.01, timeoutMs: 180_000 });
  process.stdout.write(`# seed ${report.seed}, ${report.seconds} s; deliveries ${JSON.stringify(report.deliveries)}\n`);
  // assert
  assert.ok(report.deliveries.longerThanLease > 0, `no reconcile outlasted the lease (seed ${report.seed}): the run proved nothing`);
  // Only a stalled event loop (the beat could not run for most of a lease) may cost a live worker
  // its key, and then at most the keys in flight at the time (10 workers).
  const { overlapping, stalls } = report.deliveries;
  assert.ok(overlapping <= stalls * 10, `${overlapping} keys delivered again while a live worker still reconciled them, with ${stalls} event-loop stalls`);
  assert.deepEqual(chaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});
