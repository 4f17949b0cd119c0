/**
 * Every controller scenario (controller-scenarios.ts) once, small, under the whole chaos suite:
 * on the emulator in `npm test`; on the real control plane (`npm run test:real`) the ones that fit
 * its time budget, the rest through `npm run chaos -- --lane real` (docs/reliability.md).
 * CHAOS_SEED pins the seed (a failure prints the one it used).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REAL } from '../support/lanes.ts';
import { SCENARIOS } from './controller-scenarios.ts';
import { controllersWithoutChaos, runControllerChaos } from './run-controller-chaos.ts';

/** The scenarios the real lane's budget takes (each starts its own control plane: ~1–2 min on a loaded machine). */
const ON_REAL = new Set(['run-strategies', 'hotplug']);
const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : undefined;

for (const s of SCENARIOS) {
  const skip = REAL && !ON_REAL.has(s.name) ? `real lane: outside the test budget; npm run chaos -- --lane real --only ${s.name}` : false;
  test(`${s.name} under chaos (${s.controllers.join(', ')}): its invariant at every audit instant, nothing dead-lettered`, { skip }, async () => {
    // arrange + act
    const r = await runControllerChaos(s, seed !== undefined ? { seed } : {});
    process.stdout.write(`# ${s.name}: seed ${r.seed}, ${r.seconds} s; ${r.checked}; injected ${JSON.stringify(r.injected)}\n`);
    // assert
    assert.deepEqual(r.violations, [], `seed ${r.seed} (CHAOS_SEED=${r.seed} reruns it); injected ${JSON.stringify(r.injected)}`);
  });
}

test('every controller runs under chaos somewhere (a scenario, or the VMI, replica set and drain runs)', () => {
  // arrange + act
  const missing = controllersWithoutChaos();
  // assert
  assert.deepEqual(missing, [], `controllers no chaos run exercises: ${missing.join(', ')}`);
});
