import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createClock } from '../../../sandbox/clock.ts';

describe('sandbox clock', () => {
  test('a frozen clock only moves with advance() and fires timers in due order', () => {
    // arrange
    const clock = createClock({ speed: 0, start: Date.parse('2026-01-01T00:00:00Z') });
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b'), 2000);
    clock.setTimeout(() => fired.push('a'), 1000);
    const c = clock.setTimeout(() => fired.push('c'), 1500);
    clock.clearTimeout(c);
    // act
    clock.advance(1999);
    const afterFirst = [...fired];
    clock.advance(1);
    // assert
    assert.deepEqual(afterFirst, ['a'], 'only the timer due at +1 s should have fired');
    assert.deepEqual(fired, ['a', 'b'], 'the cleared timer must never fire');
    assert.equal(clock.isoNow(), '2026-01-01T00:00:02Z', 'timestamps are second precision with Z');
    assert.equal(clock.pending(), 0);
  });

  test('timers scheduled from a firing timer that fall inside an advance() fire within it', () => {
    // arrange
    const clock = createClock({ speed: 0, start: 0 });
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.nowMs());
      clock.setTimeout(() => fired.push(clock.nowMs()), 0);
    }, 10);
    // act
    clock.advance(100);
    // assert
    assert.equal(fired.length, 2, 'the nested zero-delay timer should fire in the same advance');
  });

  test('speed scales simulated time against real time', async () => {
    // arrange
    const clock = createClock({ speed: 1000, start: 0 });
    // act
    await clock.sleep(5000); // 5 simulated seconds = ~5 real ms
    // assert
    assert.ok(clock.nowMs() >= 5000, `simulated time should have reached 5000 ms, got ${clock.nowMs()}`);
    assert.throws(() => clock.setSpeed(-1), RangeError);
  });
});
