/**
 * Expectation cases of the conformance suite: KubeVirt's ControllerExpectations +
 * UIDTrackingControllerExpectations semantics (reference.md §e), and tryExpectCreations races.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidInputError } from '../../shared/errors.ts';
import { EXPECTATIONS_TIMEOUT_MS } from '../../shared/state/port.ts';
import { race, type ConformanceContext } from './conformance-support.ts';

const TIMEOUT = EXPECTATIONS_TIMEOUT_MS;

export function registerExpectationCases(ctx: ConformanceContext): void {
  const { t0, unique } = ctx;
  const a = () => ctx.stores()[0].expectations;
  const b = () => ctx.stores()[1].expectations;

  describe('expectations', () => {
    test('a key with no record is satisfied and has no record', async () => {
      // arrange
      const scope = unique('scope');
      // act
      const satisfied = await a().satisfied(scope, 'ns/vmi', t0);
      const record = await a().get(scope, 'ns/vmi');
      // assert
      assert.equal(satisfied, true, 'no record must count as satisfied (a new controller key syncs at once)');
      assert.equal(record, undefined);
    });

    test('expectCreations records add=n, del=0 at now and is unsatisfied until every creation is observed', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectCreations(scope, 'ns/vmi', 2, t0);
      // act + assert
      assert.deepEqual(await b().get(scope, 'ns/vmi'), { add: 2, del: 0, deleteKeys: [], setAt: t0 }, 'record as written, seen from the other connection');
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), false);
      await b().creationObserved(scope, 'ns/vmi');
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), false, 'one of two creations observed');
      await a().creationObserved(scope, 'ns/vmi');
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), true, 'both creations observed');
      assert.equal((await a().get(scope, 'ns/vmi'))?.setAt, t0, 'observing must not refresh the timestamp');
    });

    test('creationObserved decrements past zero (add may go negative) and stays satisfied', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectCreations(scope, 'ns/vmi', 1, t0);
      // act
      await a().creationObserved(scope, 'ns/vmi');
      await a().creationObserved(scope, 'ns/vmi');
      // assert
      assert.equal((await a().get(scope, 'ns/vmi'))?.add, -1);
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), true);
    });

    test('creationObserved and deletionObserved without a record are no-ops (no record is created)', async () => {
      // arrange
      const scope = unique('scope');
      // act
      await a().creationObserved(scope, 'ns/vmi');
      await a().deletionObserved(scope, 'ns/vmi', 'ns/pod');
      // assert
      assert.equal(await a().get(scope, 'ns/vmi'), undefined);
    });

    test('expectCreations overwrites an existing record (counters and timestamp)', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectCreations(scope, 'ns/vmi', 3, t0);
      await a().creationObserved(scope, 'ns/vmi');
      // act
      await b().expectCreations(scope, 'ns/vmi', 1, t0 + 1000);
      // assert
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 1, del: 0, deleteKeys: [], setAt: t0 + 1000 });
    });

    test('setExpectations overwrites add and del; 0/0 lowers to satisfied', async () => {
      // arrange
      const scope = unique('scope');
      await a().setExpectations(scope, 'ns/vmi', 1, 1, t0);
      await a().creationObserved(scope, 'ns/vmi');
      // act + assert
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 0, del: 1, deleteKeys: [], setAt: t0 });
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), false, 'del 1 is still pending');
      await a().setExpectations(scope, 'ns/vmi', 0, 0, t0 + 5);
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0 + 5), true, 'SetExpectations(0, 0) lowers');
      assert.equal((await a().get(scope, 'ns/vmi'))?.setAt, t0 + 5);
    });

    test('expectDeletions stores the set of delete keys (duplicates once), add=0, del=size', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectCreations(scope, 'ns/vmi', 2, t0);
      // act
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-b', 'ns/pod-a', 'ns/pod-b'], t0 + 1);
      // assert
      assert.deepEqual(await b().get(scope, 'ns/vmi'), { add: 0, del: 2, deleteKeys: ['ns/pod-a', 'ns/pod-b'], setAt: t0 + 1 });
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0 + 1), false);
    });

    test('deletionObserved counts a tracked key once and ignores unknown keys', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-a', 'ns/pod-b'], t0);
      // act: pod-a seen deleted twice (graceful-deletion update, then the final delete), an unrelated pod once
      await a().deletionObserved(scope, 'ns/vmi', 'ns/pod-a');
      await b().deletionObserved(scope, 'ns/vmi', 'ns/pod-a');
      await a().deletionObserved(scope, 'ns/vmi', 'ns/other');
      // assert
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 0, del: 1, deleteKeys: ['ns/pod-b'], setAt: t0 });
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), false);
      await a().deletionObserved(scope, 'ns/vmi', 'ns/pod-b');
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 0, del: 0, deleteKeys: [], setAt: t0 });
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), true);
    });

    test('expectDeletions replaces (clobbers) the previous delete-key set', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-a', 'ns/pod-b'], t0);
      // act
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-c'], t0 + 1);
      await a().deletionObserved(scope, 'ns/vmi', 'ns/pod-a');
      // assert
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 0, del: 1, deleteKeys: ['ns/pod-c'], setAt: t0 + 1 }, 'pod-a is no longer expected');
    });

    test('expectDeletions with no keys is an empty, satisfied expectation', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-a'], t0);
      // act
      await a().expectDeletions(scope, 'ns/vmi', [], t0 + 1);
      // assert
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 0, del: 0, deleteKeys: [], setAt: t0 + 1 });
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0 + 1), true);
    });

    test('expectCreations keeps the delete-key set, as KubeVirt keeps its UID store apart', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-a'], t0);
      // act
      await a().expectCreations(scope, 'ns/vmi', 1, t0 + 1);
      await a().deletionObserved(scope, 'ns/vmi', 'ns/pod-a');
      // assert
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 1, del: -1, deleteKeys: [], setAt: t0 + 1 });
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0 + 1), false, 'the creation is still pending');
    });

    test('an unsatisfied record expires strictly after 5 minutes (and then counts as satisfied)', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectCreations(scope, 'ns/vmi', 1, t0);
      // act + assert (table-driven over `now`)
      for (const [offset, want] of [[0, false], [TIMEOUT - 1, false], [TIMEOUT, false], [TIMEOUT + 1, true], [2 * TIMEOUT, true]] as const) {
        assert.equal(await a().satisfied(scope, 'ns/vmi', t0 + offset), want, `satisfied at t0+${offset} ms`);
      }
      assert.equal((await a().get(scope, 'ns/vmi'))?.add, 1, 'an expired record is still readable');
    });

    test('delete removes the record and its delete keys', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod-a'], t0);
      // act
      await b().delete(scope, 'ns/vmi');
      await a().deletionObserved(scope, 'ns/vmi', 'ns/pod-a');
      // assert
      assert.equal(await a().get(scope, 'ns/vmi'), undefined);
      assert.equal(await a().satisfied(scope, 'ns/vmi', t0), true);
      await a().delete(scope, 'ns/vmi'); // deleting nothing is fine
    });

    test('scopes are separate stores', async () => {
      // arrange
      const pods = unique('pods');
      const vmis = unique('vmis');
      // act
      await a().expectCreations(pods, 'ns/vmi', 1, t0);
      // assert
      assert.equal(await a().satisfied(pods, 'ns/vmi', t0), false);
      assert.equal(await a().satisfied(vmis, 'ns/vmi', t0), true);
    });

    test('pendingCreations sums add (negatives included) over the unexpired records of one scope', async () => {
      // arrange
      const scope = unique('migration-pods');
      await a().expectCreations(scope, 'ns/m1', 2, t0);
      await a().expectCreations(scope, 'ns/m2', 1, t0 + 10);
      await a().expectCreations(scope, 'ns/m3', 1, t0);
      await a().creationObserved(scope, 'ns/m3');
      await a().creationObserved(scope, 'ns/m3'); // add = -1
      await a().expectCreations(scope, 'ns/old', 5, t0 - TIMEOUT - 1); // already expired at t0
      await a().expectCreations(unique('other-scope'), 'ns/m1', 7, t0);
      // act + assert
      assert.equal(await b().pendingCreations(scope, t0), 2 + 1 - 1);
      assert.equal(await b().pendingCreations(scope, t0 + TIMEOUT + 1), 1, 'only ns/m2 (set 10 ms later) is still unexpired');
      assert.equal(await b().pendingCreations(unique('empty'), t0), 0);
    });

    test('tryExpectCreations takes an absent, satisfied or expired record, never a pending one', async () => {
      // arrange
      const scope = unique('scope');
      // act + assert
      assert.equal(await a().tryExpectCreations(scope, 'ns/vmi', 1, t0), true, 'absent');
      assert.equal(await b().tryExpectCreations(scope, 'ns/vmi', 1, t0 + 1), false, 'pending and unexpired');
      assert.equal(await b().tryExpectCreations(scope, 'ns/vmi', 1, t0 + TIMEOUT), false, 'exactly 5 minutes is not expired yet');
      assert.equal(await b().tryExpectCreations(scope, 'ns/vmi', 2, t0 + TIMEOUT + 1), true, 'expired: taken over');
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 2, del: 0, deleteKeys: [], setAt: t0 + TIMEOUT + 1 });
      await a().creationObserved(scope, 'ns/vmi');
      await a().creationObserved(scope, 'ns/vmi');
      assert.equal(await a().tryExpectCreations(scope, 'ns/vmi', 1, t0 + TIMEOUT + 2), true, 'satisfied');
      await a().expectDeletions(scope, 'ns/vmi', ['ns/pod'], t0 + TIMEOUT + 3);
      assert.equal(await a().tryExpectCreations(scope, 'ns/vmi', 1, t0 + TIMEOUT + 4), false, 'a pending deletion blocks too');
    });

    test('tryExpectCreations with `seen`: only under the record the decision was made under', async () => {
      // arrange: decided under no record; meanwhile another worker records and its pod is seen
      const scope = unique('scope');
      assert.equal(await b().tryExpectCreations(scope, 'ns/vmi', 1, t0), true);
      await b().creationObserved(scope, 'ns/vmi');
      // act + assert
      assert.equal(await a().tryExpectCreations(scope, 'ns/vmi', 1, t0 + 1, null), false, 'a record set since "none": even satisfied, refused');
      assert.equal(await a().tryExpectCreations(scope, 'ns/vmi', 1, t0 + 2, { setAt: t0 + 99 }), false, 'another record than the one seen');
      assert.equal(await a().tryExpectCreations(scope, 'ns/vmi', 1, t0 + 3, { setAt: t0 }), true, 'the satisfied record seen, not re-set since');
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 1, del: 0, deleteKeys: [], setAt: t0 + 3 });
      assert.equal(await b().tryExpectCreations(scope, 'ns/vmi', 1, t0 + 4, { setAt: t0 + 3 }), false, 'the record seen, but pending: refused as without `seen`');
      assert.equal(await b().tryExpectCreations(scope, 'ns/vmi', 1, t0 + TIMEOUT + 4, null), true, 'an expired record counts as none');
      const fresh = unique('scope');
      assert.equal(await a().tryExpectCreations(fresh, 'ns/vmi', 1, t0, null), true, 'none seen, none there');
      assert.equal(await a().tryExpectCreations(unique('scope'), 'ns/vmi', 1, t0, { setAt: t0 - 5 }), true, 'the record seen is gone: taken');
    });

    test('tryExpectCreations: exactly one of 20 racing callers wins', async () => {
      // arrange
      const scope = unique('scope');
      // act
      const results = await race(ctx.stores(), 20, (s) => s.expectations.tryExpectCreations(scope, 'ns/vmi', 1, t0));
      // assert
      assert.equal(results.filter(Boolean).length, 1, `winners: ${JSON.stringify(results)}`);
      assert.deepEqual(await a().get(scope, 'ns/vmi'), { add: 1, del: 0, deleteKeys: [], setAt: t0 });
    });

    test('tryExpectCreations: exactly one of 20 racing callers takes over an expired record', async () => {
      // arrange
      const scope = unique('scope');
      await a().expectCreations(scope, 'ns/vmi', 1, t0);
      const later = t0 + TIMEOUT + 1000;
      // act
      const results = await race(ctx.stores(), 20, (s, i) => s.expectations.tryExpectCreations(scope, 'ns/vmi', 1, later + i));
      // assert
      const winners = results.flatMap((won, i) => (won ? [i] : []));
      assert.equal(winners.length, 1, `winners: ${JSON.stringify(winners)}`);
      assert.equal((await a().get(scope, 'ns/vmi'))?.setAt, later + (winners[0] ?? -1), "the record is the winner's");
    });

    test('20 racing creationObserved and 20 racing deletionObserved (10 keys, each twice) are all applied atomically', async () => {
      // arrange
      const scope = unique('scope');
      const podKeys = Array.from({ length: 10 }, (_, i) => `ns/pod-${i}`);
      await a().expectCreations(scope, 'ns/create', 20, t0);
      await a().expectDeletions(scope, 'ns/delete', podKeys, t0);
      // act
      await Promise.all([
        race(ctx.stores(), 20, (s) => s.expectations.creationObserved(scope, 'ns/create')),
        race(ctx.stores(), 20, (s, i) => s.expectations.deletionObserved(scope, 'ns/delete', podKeys[i % 10] as string)),
      ]);
      // assert
      assert.equal((await a().get(scope, 'ns/create'))?.add, 0, 'no decrement lost');
      assert.deepEqual(await a().get(scope, 'ns/delete'), { add: 0, del: 0, deleteKeys: [], setAt: t0 }, 'each key counted once');
    });

    test('invalid input is rejected with InvalidInputError', async () => {
      // arrange
      const scope = unique('scope');
      // act + assert
      await assert.rejects(a().expectCreations(scope, '', 1, t0), InvalidInputError);
      await assert.rejects(a().expectCreations('', 'ns/vmi', 1, t0), InvalidInputError);
      await assert.rejects(a().expectCreations(scope, 'ns/vmi', -1, t0), InvalidInputError);
      await assert.rejects(a().setExpectations(scope, 'ns/vmi', 1.5, 0, t0), InvalidInputError);
      await assert.rejects(a().expectDeletions(scope, 'ns/vmi', [''], t0), InvalidInputError);
      assert.equal(await a().get(scope, 'ns/vmi'), undefined, 'nothing was written');
    });
  });
}
