/**
 * The controller registry (shared/controllers.ts), the definitions (functions/registry.ts) and
 * the relay's wakes (functions/wakes.ts): every registered controller has its folder, its Lambda
 * entry, its definition and its wakes, the three lists agree, and everything that enumerates
 * controllers reads the registry.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFINITIONS } from '../functions/registry.ts';
import { WAKES } from '../functions/wakes.ts';
import { LAMBDA_BUNDLES } from '../infra/aws/bundles.ts';
import { DEFAULT_WORKERS } from '../local/runtime.ts';
import { ENTRIES } from '../scripts/build.ts';
import { CONTROLLER_REGISTRY, CONTROLLERS } from '../shared/controllers.ts';
import { projectRoot } from './support/reference.ts';

test('every registered controller has its folder with a Lambda handler, and a definition', () => {
  for (const c of CONTROLLER_REGISTRY) {
    assert.match(c.name, /^[a-z][a-z0-9-]*$/, `${c.name}: a queue-safe name`);
    assert.ok(existsSync(join(projectRoot, 'functions', c.name, 'handler.ts')), `functions/${c.name}/handler.ts`);
    assert.ok(c.workers > 0 && c.weight > 0);
  }
  assert.deepEqual(DEFINITIONS.map((d) => d.name), [...CONTROLLERS], 'functions/registry.ts lists one definition per registry entry, in its order');
});

test('the relay\'s wakes are the definitions\' wakes, in the same order', () => {
  assert.deepEqual(WAKES.map((w) => w.controller), [...CONTROLLERS], 'functions/wakes.ts lists one wakes per registry entry, in its order');
  DEFINITIONS.forEach((d, i) => assert.equal(WAKES[i], d.wakes, `functions/wakes.ts entry ${i} is the wakes of ${d.name}'s definition`));
});

test('bundles, the stack\'s Lambdas and the local workers follow the registry', () => {
  assert.deepEqual(
    ENTRIES.filter((e) => e.lambda && e.name !== 'timer-forwarder').map((e) => e.name),
    [...CONTROLLERS],
  );
  assert.deepEqual([...LAMBDA_BUNDLES], [...CONTROLLERS, 'timer-forwarder']);
  assert.deepEqual(Object.keys(DEFAULT_WORKERS), [...CONTROLLERS]);
});

test('each controller watches something, and every RBAC rule names groups, resources and verbs', () => {
  for (const w of WAKES) assert.ok(w.watches.length > 0, `${w.controller} watches nothing`);
  for (const d of DEFINITIONS) {
    assert.ok(d.rbac.length > 0, `${d.name} has no RBAC rules`);
    for (const r of d.rbac) assert.ok(r.apiGroups.length > 0 && r.resources.length > 0 && r.verbs.length > 0, `${d.name}: an empty RBAC rule`);
  }
});
