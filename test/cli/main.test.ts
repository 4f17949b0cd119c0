import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { projectRoot } from '../support/reference.ts';

function cli(...args: string[]) {
  return spawnSync(process.execPath, ['bin/virt-reconciler.js', ...args], { cwd: projectRoot, encoding: 'utf8' });
}

test('an unknown command is a one-line error with usage, exit 2, no stack trace', () => {
  // act
  const r = cli('frobnicate');
  // assert
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown command 'frobnicate'/);
  assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/, 'no stack trace');
});

test('--help lists the commands and exits 0', () => {
  const r = cli('--help');
  assert.equal(r.status, 0);
  assert.match(r.stdout, /usage: virt-reconciler <command>/);
});
