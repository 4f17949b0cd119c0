import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newTimer, planTimer } from '../../shared/queue/timer-forwarder.ts';
import { keyMessage } from './conformance.ts';

describe('requeue-after timers on SQS (delay queue + forwarder)', () => {
  const msg = keyMessage('ns/a', 5);
  const t0 = 1_700_000_000_000;
  const cases: [name: string, seconds: number, at: number, want: string][] = [
    ['a short timer is delayed by its own length', 30, t0, 'first delay 30'],
    ['a timer over 15 minutes is chained: first leg 900 s', 3600, t0, 'first delay 900'],
    ['a chained timer not yet due waits another leg (capped at 900 s)', 3600, t0 + 900_000, 'wait 900'],
    ['the last leg of a chained timer waits for the rest', 1200, t0 + 900_000, 'wait 300'],
    ['a due timer is forwarded', 30, t0 + 30_000, 'forward'],
    ['a timer delivered a bit early (< 1 s) fires', 30, t0 + 29_500, 'forward'],
  ];
  for (const [name, seconds, at, want] of cases) {
    test(name, () => {
      // arrange
      const timer = newTimer(msg, seconds, t0);
      // act
      const plan = at === t0 ? undefined : planTimer(timer.body, at);
      // assert
      const got = plan === undefined ? `first delay ${timer.delaySeconds}` : plan.kind === 'wait' ? `wait ${plan.delaySeconds}` : plan.kind;
      assert.equal(got, want);
    });
  }

  test('the forwarded key carries cause REQUEUE; its dedup id differs per timer, not per key', () => {
    // arrange
    const p1 = planTimer(newTimer(msg, 10, t0).body, t0 + 10_000);
    const p1again = planTimer(newTimer(msg, 10, t0).body, t0 + 10_000);
    const p2 = planTimer(newTimer(msg, 10, t0 + 60_000).body, t0 + 70_000);
    // assert
    assert.ok(p1.kind === 'forward' && p1again.kind === 'forward' && p2.kind === 'forward');
    assert.equal(p1.message.cause.event, 'REQUEUE');
    assert.equal(p1.groupId, 'ns/a');
    assert.equal(p1.dedupId, p1again.dedupId, 'a redelivered timer must be deduplicated');
    assert.notEqual(p1.dedupId, p2.dedupId, 'a later requeue of the same key must not be dropped');
  });

  test('a malformed timer body is dropped with a reason', () => {
    const plan = planTimer('{"v":1,"fireAt":5,"message":{"v":1}}', t0);
    assert.equal(plan.kind, 'drop');
    assert.match(plan.kind === 'drop' ? plan.why : '', /controller/);
  });
});
