/**
 * The controller registry (shared/controllers.ts) and its wiring (functions/registry.ts): every
 * registered controller has its folder, its Lambda entry, its wiring and its relay route, and
 * everything that enumerates controllers reads the registry.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { relayRoutes, WIRING } from '../functions/registry.ts';
import { LAMBDA_BUNDLES } from '../infra/aws/bundles.ts';
import { DEFAULT_WORKERS } from '../local/runtime.ts';
import { ENTRIES } from '../scripts/build.ts';
import { CONTROLLER_REGISTRY, CONTROLLERS } from '../shared/controllers.ts';
import { projectRoot } from './support/reference.ts';

test('every registered controller has its folder with a Lambda handler, and a wiring entry', () => {
  for (const c of CONTROLLER_REGISTRY) {
    assert.match(c.name, /^[a-z][a-z0-9-]*$/, `${c.name}: a queue-safe name`);
    assert.ok(existsSync(join(projectRoot, 'functions', c.name, 'handler.ts')), `functions/${c.name}/handler.ts`);
    assert.ok(WIRING[c.name], `functions/registry.ts has ${c.name}`);
    assert.ok(c.workers > 0 && c.weight > 0);
  }
  assert.deepEqual(Object.keys(WIRING).sort(), [...CONTROLLERS].sort(), 'no wiring without a registry entry');
});

test('bundles, the stack\'s Lambdas and the local workers follow the registry', () => {
  assert.deepEqual(
    ENTRIES.filter((e) => e.lambda && e.name !== 'timer-forwarder').map((e) => e.name),
    [...CONTROLLERS],
  );
  assert.deepEqual([...LAMBDA_BUNDLES], [...CONTROLLERS, 'timer-forwarder']);
  assert.deepEqual(Object.keys(DEFAULT_WORKERS), [...CONTROLLERS]);
});

test('each controller watches something and its mapper is made once per shared factory', () => {
  const routes = relayRoutes();
  assert.equal(routes.length, CONTROLLERS.length);
  for (const r of routes) assert.ok(r.watches.length > 0);
  assert.ok(new Set(routes.map((r) => r.mapper)).size <= routes.length);
});
