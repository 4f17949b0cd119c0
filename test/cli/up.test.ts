import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { projectRoot } from '../support/reference.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'vr-up-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

function up(...args: string[]) {
  return spawnSync(process.execPath, ['bin/virt-reconciler.js', 'up', ...args], { cwd: projectRoot, encoding: 'utf8', timeout: 180_000, env: { ...process.env, KUBECONFIG: '' } });
}

test('up --sandbox --exit-when-settled: every example VMI (and running VM) is handed off, then a clean exit 0', () => {
  // act
  const r = up('--sandbox', '--exit-when-settled', '--timeout', '120', '--data-dir', dataDir, '--dashboard-port', '0');
  // assert
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /cluster: sandbox at http:\/\/127\.0\.0\.1:\d+/);
  assert.match(r.stdout, /applied \d+ objects from examples\//);
  assert.match(r.stdout, /settled: all 4 example VMIs handed off/);
  assert.match(r.stdout, /metrics: http:\/\/127\.0\.0\.1:\d+\/metrics/, 'up prints where its /metrics is');
  assert.match(r.stdout, /stopped cleanly/);
});

test('up with a wrong flag: one line on stderr, exit 2', () => {
  // act
  const r = up('--frobnicate');
  // assert
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown flag '--frobnicate'|frobnicate/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
});

test('up --prometheus with something that is not an http URL: one line naming the flag, exit 2', () => {
  // act
  const r = up('--prometheus', 'localhost9090', '--sandbox');
  // assert
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--prometheus takes a URL such as http:\/\/127\.0\.0\.1:9090, got 'localhost9090'/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
});

test('up --kubeconfig naming a missing file: a clear error naming it, exit 2', () => {
  // act
  const r = up('--kubeconfig', join(dataDir, 'nope.yaml'));
  // assert
  assert.equal(r.status, 2);
  assert.match(r.stderr, /nope\.yaml/);
});

test('up --examples with a broken manifest: one line naming the file, exit 2, nothing left running', async () => {
  // arrange
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const dir = join(dataDir, 'broken');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: [unclosed\n');
  // act
  const r = up('--sandbox', '--examples', dir, '--data-dir', dataDir, '--no-dashboard');
  // assert
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /bad\.yaml/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.doesNotMatch(r.stdout, /cluster: sandbox/, 'the sandbox never started');
});
