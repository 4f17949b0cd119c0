/**
 * Folder boundaries: a controller never imports another controller (code two of them need lives
 * in shared/), and shared/ never imports functions/. Only functions/registry.ts, the wiring,
 * names every controller. Fails naming each offending import.
 */
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../support/reference.ts';

/** Every relative module specifier a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.[^'"]+)['"]/g)) out.push(m[1]!);
  return out;
}

/** `functions/<folder>/…` → `<folder>`; anything else → undefined. */
function functionsFolder(path: string): string | undefined {
  const parts = relative(projectRoot, path).split(sep);
  return parts[0] === 'functions' && parts.length > 2 ? parts[1] : undefined;
}

function violations(glob: string, forbidden: (from: string, to: string) => boolean): string[] {
  const out: string[] = [];
  for (const rel of globSync(glob, { cwd: projectRoot })) {
    const file = join(projectRoot, rel);
    for (const spec of importsOf(file)) {
      const target = resolve(dirname(file), spec);
      if (forbidden(file, target)) out.push(`${rel} imports ${relative(projectRoot, target)}`);
    }
  }
  return out;
}

test('no functions/<a>/ file imports functions/<b>/ (controllers, and the relay, never import each other)', () => {
  const found = violations('functions/*/**/*.ts', (from, to) => {
    const a = functionsFolder(from);
    const b = functionsFolder(to);
    return b !== undefined && a !== b;
  });
  assert.deepEqual(found, [], 'move what two folders share to shared/');
});

test('shared/ never imports functions/', () => {
  const found = violations('shared/**/*.ts', (_from, to) => relative(projectRoot, to).split(sep)[0] === 'functions');
  assert.deepEqual(found, []);
});

test('the rule itself sees a cross-controller import', () => {
  // arrange: what functions/migration/ did before the pod predicates moved to shared/
  const from = join(projectRoot, 'functions/migration/phases.ts');
  const to = resolve(dirname(from), '../vmi/pods.ts');
  // assert
  assert.equal(functionsFolder(from), 'migration');
  assert.equal(functionsFolder(to), 'vmi');
  assert.deepEqual(importsOf(join(projectRoot, 'functions/registry.ts')).filter((s) => s.startsWith('./vmi/')), ['./vmi/controller.ts'], 'the registry is the place that names controllers');
});
