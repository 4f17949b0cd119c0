/**
 * `npm run chaos`'s flags: a wrong one is one line on stderr and exit 2, before anything starts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const chaos = (...args: string[]) => spawnSync(process.execPath, ['scripts/chaos.ts', ...args], { encoding: 'utf8', timeout: 60_000 });

test('the soak refuses an action it does not have, naming the ones it has', () => {
  // act
  const r = chaos('--soak', '1m', '--actions', 'scaleRs,teleport');
  // assert
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--actions: unknown teleport; the soak's actions are createVmi, .*scaleRs.*drain/);
});

test('--actions and --heap-snapshots go with --soak only', () => {
  // act
  const actions = chaos('--actions', 'drain');
  const snapshots = chaos('--heap-snapshots', '/tmp');
  // assert
  assert.equal(actions.status, 2);
  assert.match(actions.stderr, /--actions goes with --soak/);
  assert.equal(snapshots.status, 2);
  assert.match(snapshots.stderr, /--heap-snapshots goes with --soak/);
});

test('--heap-snapshots names a directory that exists', () => {
  // act
  const r = chaos('--soak', '1m', '--heap-snapshots', '/nonexistent/heap');
  // assert
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--heap-snapshots: no directory \/nonexistent\/heap/);
});

test('--cluster goes with --soak, is apart or in-process, and apart is the emulator lane only', () => {
  // act
  const alone = chaos('--cluster', 'apart');
  const wrong = chaos('--soak', '1m', '--cluster', 'elsewhere');
  const real = chaos('--soak', '1m', '--cluster', 'apart', '--lane', 'real');
  // assert
  assert.equal(alone.status, 2);
  assert.match(alone.stderr, /--cluster goes with --soak/);
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /--cluster must be apart or in-process, not "elsewhere"/);
  assert.equal(real.status, 2);
  assert.match(real.stderr, /--cluster apart runs the emulator lane only/);
});
