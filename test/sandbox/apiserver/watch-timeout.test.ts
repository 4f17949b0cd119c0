/**
 * The emulator's default watch timeout (kube-apiserver's: random between --min-request-timeout and
 * twice that) in whole seconds: each distinct length is a Node timer list that outlives a watch
 * closed early by up to that length (the hour's soak, seed 65, held 30,000 of them).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchTimeoutSeconds } from '../../../sandbox/apiserver/http-handler.ts';

test('a watch without timeoutSeconds times out after whole seconds within the range, so its timer lengths are few', () => {
  // arrange: a spread of random draws
  const draws = Array.from({ length: 10_000 }, (_, i) => i / 9_999);
  // act
  const chosen = draws.map((r) => watchTimeoutSeconds([1800, 3600], () => r));
  // assert
  assert.ok(chosen.every((s) => Number.isInteger(s) && s >= 1800 && s <= 3600));
  assert.equal(new Set(chosen).size, 1801, 'one length per second of the range, whatever the number of watches');
});
