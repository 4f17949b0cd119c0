import assert from 'node:assert/strict';
import { test } from 'node:test';
import { creationGate } from '../../shared/reconcile/creation-gate.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import { EXPECTATIONS_TIMEOUT_MS } from '../../shared/state/port.ts';

const T0 = Date.parse('2026-12-01T12:00:00Z');

test('creation gate: a dead pass\'s record holds the key until it expires or is taken over, and says when to look again', async () => {
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
    const deps = { expectations: state.expectations, now: () => T0 + o.age, ...(o.takeoverMs ? { takeoverMs: o.takeoverMs } : {}), ...(o.clockSpeed ? { clockSpeed: o.clockSpeed } : {}) };
    // act
    const out = await creationGate(deps, 's', 'k', 'why');
    // assert
    const left = await state.expectations.get('s', 'k');
    const verdict = out === undefined ? 'go' : out.kind === 'requeue' ? `wait ${Math.round(out.afterSeconds)}` : out.kind;
    // Whether the record is still there matters only where a takeover is in play.
    const got = o.takeoverMs && o.age < EXPECTATIONS_TIMEOUT_MS ? `${verdict}, ${left ? 'kept' : 'dropped'}` : verdict;
    assert.equal(got, want, name);
    await state.close();
  }
});
