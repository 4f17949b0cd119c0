/**
 * The relay's bundle (dist/relay/index.mjs, scripts/build.ts) is the watch relay and the
 * controllers' wakes, nothing of a reconciler: it imports functions/wakes.ts, never
 * functions/registry.ts. Checked on esbuild's own list of the files it bundled.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildBundles, type BuiltBundle } from '../../../scripts/build.ts';

let outDir: string;
let relay: BuiltBundle;

before(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'relay-bundle-'));
  const r = await buildBundles({ only: ['relay'], outDir, log: () => undefined });
  relay = r.built[0]!;
});
after(() => rmSync(outDir, { recursive: true, force: true }));

test('no reconcile code among the relay bundle\'s inputs: only the relay, the wakes and shared/', () => {
  // A controller folder contributes its wakes.ts and what that imports (pure predicates, names);
  // its reconcile, definition, deps, handler and the registry must stay out.
  const reconcilers = relay.inputs.filter((f) => /^functions\/[^/]+\/(reconcile|controller|deps|handler|rbac)\.ts$/.test(f) || f === 'functions/registry.ts');
  assert.deepEqual(reconcilers, [], 'the relay bundle carries reconcile code');
  assert.deepEqual(relay.inputs.filter((f) => f.startsWith('shared/template/')), [], 'the relay reaches the template service');
  assert.ok(relay.inputs.includes('functions/wakes.ts') && relay.inputs.includes('functions/vmi/wakes.ts'), 'the wakes are in the relay bundle');
});
