/** The one expectations gate (shared/reconcile/expectations-gate.ts) and the conditional creation claim. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answeredCreations, claimCreations, expectationsGate, type Gate } from '../../shared/reconcile/expectations-gate.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import { EXPECTATIONS_TIMEOUT_MS } from '../../shared/state/port.ts';

const T0 = Date.parse('2026-12-01T12:00:00Z');

test('answered creations: a dead pass\'s record holds the key until it expires or is taken over, and says when to look again', async () => {
  const rows: [string, { record?: number; age: number; takeoverMs?: number; clockSpeed?: number }, string][] = [
    ['no record: go on', { age: 0 }, 'go'],
    ['satisfied record: go on', { record: 0, age: 1000 }, 'go'],
    ['unsatisfied, fresh: wait out the 5-minute expiry', { record: 2, age: 60_000 }, 'wait 240'],
    ['unsatisfied, expired: go on', { record: 2, age: EXPECTATIONS_TIMEOUT_MS }, 'go'],
    ['takeover shorter than the expiry: wait for it', { record: 2, age: 1000, takeoverMs: 4000 }, 'wait 3, kept'],
    ['takeover reached: dropped, go on', { record: 2, age: 4000, takeoverMs: 4000 }, 'go, dropped'],
    ['takeover not reached: kept', { record: 2, age: 3000, takeoverMs: 4000 }, 'wait 1, kept'],
    ['takeover never beyond the expiry', { record: 2, age: EXPECTATIONS_TIMEOUT_MS, takeoverMs: 10 * EXPECTATIONS_TIMEOUT_MS }, 'go'],
    ['a sped-up clock: the wall-clock wait is shorter', { record: 2, age: 60_000, clockSpeed: 10 }, 'wait 24'],
  ];
  for (const [name, o, want] of rows) {
    // arrange
    const state = openSqliteState();
    if (o.record !== undefined) await state.expectations.setExpectations('s', 'k', o.record, 0, T0);
    const deps = { expectations: state.expectations, log: silentLogger, now: () => T0 + o.age, ...(o.takeoverMs ? { takeoverMs: o.takeoverMs } : {}), ...(o.clockSpeed ? { clockSpeed: o.clockSpeed } : {}) };
    // act
    const out = await expectationsGate(answeredCreations('s', 'k', 'test'), undefined, deps);
    // assert
    const left = await state.expectations.get('s', 'k');
    const verdict = out.kind === 'pass' ? 'go' : `wait ${Math.round(out.seconds)}`;
    // Whether the record is still there matters only where a takeover is in play.
    const got = o.takeoverMs && o.age < EXPECTATIONS_TIMEOUT_MS ? `${verdict}, ${left ? 'kept' : 'dropped'}` : verdict;
    assert.equal(got, want, name);
    await state.close();
  }
});

test('a read-lowered gate: the first read, then one quorum read, then wait; the pass decides under the record it read', async () => {
  // A creation record of 1; an observation is "what the read shows": true once the create is visible.
  const rows: [string, { first: boolean; quorum: boolean; satisfiedBefore?: boolean; reread?: boolean }, string][] = [
    ['the first read shows the create: pass on it', { first: true, quorum: true }, 'pass first, 1 read'],
    ['the first read lags, the quorum read shows it: pass on the quorum read', { first: false, quorum: true }, 'pass quorum, 2 reads'],
    ['neither shows it: wait for the takeover', { first: false, quorum: false }, 'wait 300, 2 reads'],
    ['satisfied already: pass on the first read', { first: false, quorum: false, satisfiedBefore: true }, 'pass first, 1 read'],
    ['satisfied already, re-read wanted: one quorum read first', { first: false, quorum: true, satisfiedBefore: true, reread: true }, 'pass quorum, 2 reads'],
  ];
  for (const [name, o, want] of rows) {
    // arrange
    const state = openSqliteState();
    await state.expectations.setExpectations('pods', 'vmi', o.satisfiedBefore ? 0 : 1, 0, T0);
    let reads = 1;
    const gate: Gate<{ shows: boolean; from: string }> = {
      key: 'vmi',
      scopes: ['pods'],
      what: 'pod',
      ...(o.reread ? { rereadWhenSatisfied: true } : {}),
      reobserve: async () => (reads++, { shows: o.quorum, from: 'quorum' }),
      lower: async (seen) => {
        if (seen.shows) await state.expectations.creationObserved('pods', 'vmi');
        return state.expectations.satisfied('pods', 'vmi', T0);
      },
    };
    // act
    const out = await expectationsGate(gate, { shows: o.first, from: 'first' }, { expectations: state.expectations, log: silentLogger, now: () => T0 });
    // assert
    const got = out.kind === 'pass' ? `pass ${out.observed.from}, ${reads} read${reads > 1 ? 's' : ''}` : `wait ${out.seconds}, ${reads} reads`;
    assert.equal(got, want, name);
    if (out.kind === 'pass') assert.deepEqual(out.decidedUnder, { setAt: T0 }, `${name}: the record the pass decided under`);
    await state.close();
  }
});

test('a creation claim: one of two racing passes claims; a dead claim is taken over', async () => {
  // arrange
  const state = openSqliteState();
  const at = (ms: number) => ({ expectations: state.expectations, log: silentLogger, now: () => T0 + ms, takeoverMs: 4000 });
  const waits = { whileLive: 5, afterTakeover: 1 };
  // act
  const [a, b] = [await claimCreations(at(0), 's', 'k', 1, waits), await claimCreations(at(0), 's', 'k', 1, waits)];
  const later = await claimCreations(at(5000), 's', 'k', 1, waits);
  const next = await claimCreations(at(5001), 's', 'k', 1, waits);
  // assert
  assert.deepEqual([a, b], [{ kind: 'claimed' }, { kind: 'wait', seconds: 5 }], 'of two racing passes one claims, the other waits');
  assert.deepEqual(later, { kind: 'wait', seconds: 1 }, 'a claim older than the takeover time is dropped');
  assert.deepEqual(next, { kind: 'claimed' }, 'and the next pass claims');
  await state.close();
});
