/**
 * Failure-count and lease cases of the conformance suite: atomic counting, the idle TTL, and
 * leases that never exceed their limit under racing acquirers (cluster limit 5, per-node limit 2).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidInputError } from '../../shared/errors.ts';
import { FAILURE_COUNT_TTL_MS } from '../../shared/state/port.ts';
import { race, type ConformanceContext } from './conformance-support.ts';

const TTL = 60_000;

export function registerFailureAndLeaseCases(ctx: ConformanceContext): void {
  const { t0, unique } = ctx;
  const fa = () => ctx.stores()[0].failures;
  const fb = () => ctx.stores()[1].failures;
  const la = () => ctx.stores()[0].leases;
  const lb = () => ctx.stores()[1].leases;

  describe('failure counts', () => {
    test('increment counts up from 1, get reads it, reset clears it', async () => {
      // arrange
      const scope = unique('vmi');
      // act + assert
      assert.equal(await fa().get(scope, 'ns/a'), 0, 'never failed');
      assert.deepEqual([await fa().increment(scope, 'ns/a', t0), await fb().increment(scope, 'ns/a', t0 + 1), await fa().increment(scope, 'ns/a', t0 + 2)], [1, 2, 3]);
      assert.equal(await fb().get(scope, 'ns/a'), 3);
      assert.equal(await fa().get(scope, 'ns/b'), 0, 'other keys are separate');
      assert.equal(await fa().get(unique('vm'), 'ns/a'), 0, 'other scopes are separate');
      await fb().reset(scope, 'ns/a');
      assert.equal(await fa().get(scope, 'ns/a'), 0);
      assert.equal(await fa().increment(scope, 'ns/a', t0 + 3), 1, 'counts restart after a reset');
    });

    test('a count idle for longer than the TTL reads as 0 and restarts at 1', async () => {
      // arrange
      const scope = unique('vmi');
      await fa().increment(scope, 'ns/a', t0);
      await fa().increment(scope, 'ns/a', t0 + 1);
      const idle = t0 + 1 + FAILURE_COUNT_TTL_MS + 1;
      // act + assert
      assert.equal(await fa().get(scope, 'ns/a', t0 + 1 + FAILURE_COUNT_TTL_MS), 2, 'exactly the TTL is still live');
      assert.equal(await fa().get(scope, 'ns/a', idle), 0);
      assert.equal(await fa().increment(scope, 'ns/a', idle), 1);
      assert.equal(await fa().increment(scope, 'ns/a', idle + 1), 2);
    });

    test('20 racing increments: none lost, each caller sees a distinct count', async () => {
      // arrange
      const scope = unique('vmi');
      // act
      const counts = await race(ctx.stores(), 20, (s) => s.failures.increment(scope, 'ns/a', t0));
      // assert
      assert.deepEqual([...counts].sort((x, y) => x - y), Array.from({ length: 20 }, (_, i) => i + 1));
      assert.equal(await fa().get(scope, 'ns/a'), 20);
    });
  });

  describe('leases', () => {
    test('acquire admits holders up to the limit, then refuses; holders are listed sorted', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      // act
      const got = [await la().acquire(counter, 'ns/m3', 2, t0, TTL), await lb().acquire(counter, 'ns/m1', 2, t0, TTL), await la().acquire(counter, 'ns/m2', 2, t0, TTL)];
      // assert
      assert.deepEqual(got, [true, true, false]);
      assert.deepEqual(await lb().holders(counter, t0), ['ns/m1', 'ns/m3']);
    });

    test('re-acquiring a held lease succeeds without taking a second slot, and extends it', async () => {
      // arrange
      const counter = unique('migrations/node/n1');
      await la().acquire(counter, 'ns/m1', 2, t0, 1000);
      // act
      const again = await lb().acquire(counter, 'ns/m1', 2, t0 + 500, 1000);
      const other = await la().acquire(counter, 'ns/m2', 2, t0 + 500, 1000);
      const third = await la().acquire(counter, 'ns/m3', 2, t0 + 500, 1000);
      // assert
      assert.deepEqual([again, other, third], [true, true, false]);
      assert.deepEqual(await la().holders(counter, t0 + 1200), ['ns/m1', 'ns/m2'], 'm1 was extended to t0+1500');
      assert.equal(await la().acquire(counter, 'ns/m1', 1, t0 + 1200, 1000), true, 'a holder keeps its lease even if the limit drops');
    });

    test('an expired lease frees its slot at expiresAt and cannot be revived over a full counter', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      await la().acquire(counter, 'ns/m1', 1, t0, 1000);
      // act + assert
      assert.equal(await lb().acquire(counter, 'ns/m2', 1, t0 + 999, 1000), false, 'm1 still live at t0+999');
      assert.deepEqual(await la().holders(counter, t0 + 999), ['ns/m1']);
      assert.deepEqual(await la().holders(counter, t0 + 1000), [], 'live means now < expiresAt');
      assert.equal(await lb().acquire(counter, 'ns/m2', 1, t0 + 1000, 1000), true, 'the expired slot is free');
      assert.equal(await la().acquire(counter, 'ns/m1', 1, t0 + 1500, 1000), false, 'the old holder is not let back in over the limit');
      assert.deepEqual(await la().holders(counter, t0 + 1500), ['ns/m2']);
    });

    test('release frees a slot; releasing what is not held is a no-op', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      await la().acquire(counter, 'ns/m1', 1, t0, TTL);
      // act
      await lb().release(counter, 'ns/other');
      await lb().release(unique('never-used'), 'ns/m1');
      const blocked = await la().acquire(counter, 'ns/m2', 1, t0, TTL);
      await lb().release(counter, 'ns/m1');
      const admitted = await la().acquire(counter, 'ns/m2', 1, t0, TTL);
      // assert
      assert.deepEqual([blocked, admitted], [false, true]);
      assert.deepEqual(await la().holders(counter, t0), ['ns/m2']);
    });

    test('a limit of 0 admits nobody', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      // act + assert
      assert.equal(await la().acquire(counter, 'ns/m1', 0, t0, TTL), false);
      assert.deepEqual(await la().holders(counter, t0), []);
    });

    test('30 racing acquirers, limit 5: exactly 5 hold the lease', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      // act
      const results = await race(ctx.stores(), 30, (s, i) => s.leases.acquire(counter, `ns/m${String(i).padStart(2, '0')}`, 5, t0, TTL));
      // assert
      const winners = results.flatMap((won, i) => (won ? [`ns/m${String(i).padStart(2, '0')}`] : []));
      assert.equal(winners.length, 5, `winners: ${JSON.stringify(winners)}`);
      assert.deepEqual(await la().holders(counter, t0), winners, 'the holders are exactly the winners');
    });

    test('per-node limit 2: 3 nodes x 10 racing acquirers leave exactly 2 holders per node', async () => {
      // arrange
      const nodes = ['n1', 'n2', 'n3'].map((n) => unique(`migrations/node/${n}`));
      // act
      const results = await race(ctx.stores(), 30, (s, i) => s.leases.acquire(nodes[i % 3] as string, `ns/m${i}`, 2, t0, TTL));
      // assert
      for (const [k, node] of nodes.entries()) {
        const won = results.filter((ok, i) => ok && i % 3 === k).length;
        assert.equal(won, 2, `winners on node ${k + 1}`);
        assert.equal((await la().holders(node, t0)).length, 2, `holders on node ${k + 1}`);
      }
    });

    test('30 racing acquirers over a counter full of expired leases: exactly 5 take them over', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      for (let i = 0; i < 5; i++) await la().acquire(counter, `ns/old${i}`, 5, t0, 1000);
      const later = t0 + 2000;
      // act
      const results = await race(ctx.stores(), 30, (s, i) => s.leases.acquire(counter, `ns/new${String(i).padStart(2, '0')}`, 5, later, TTL));
      // assert
      const winners = results.flatMap((won, i) => (won ? [`ns/new${String(i).padStart(2, '0')}`] : []));
      assert.equal(winners.length, 5, `winners: ${JSON.stringify(winners)}`);
      assert.deepEqual(await la().holders(counter, later), winners);
    });

    test('invalid input is rejected with InvalidInputError', async () => {
      // arrange
      const counter = unique('migrations/cluster');
      // act + assert
      await assert.rejects(la().acquire(counter, '', 1, t0, TTL), InvalidInputError);
      await assert.rejects(la().acquire('', 'ns/m1', 1, t0, TTL), InvalidInputError);
      await assert.rejects(la().acquire(counter, 'ns/m1', -1, t0, TTL), InvalidInputError);
      assert.deepEqual(await la().holders(counter, t0), []);
    });
  });
}
