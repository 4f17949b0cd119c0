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

  test('timers set and cleared behind the earliest leave its real timer alone (an hour of them held 25,000 timer lists)', async () => {
    // arrange: count the real timers the clock arms
    const clock = createClock({ speed: 1, start: 0 });
    const real = globalThis.setTimeout;
    let armed = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      armed++;
      return real(...args);
    }) as typeof setTimeout;
    const fired: string[] = [];
    try {
      clock.setTimeout(() => fired.push('near'), 30);
      // act: a hundred far-off timers set and cleared behind it
      for (let i = 0; i < 100; i++) clock.clearTimeout(clock.setTimeout(() => fired.push('far'), 3_600_000 + i));
      const behind = armed;
      // a new earliest one re-arms
      clock.setTimeout(() => fired.push('nearer'), 10);
      await new Promise((r) => real(r, 80));
      // assert
      assert.equal(behind, 1, 'one real timer for the earliest, none for those behind it');
      assert.deepEqual(fired, ['nearer', 'near']);
      assert.equal(clock.pending(), 0);
    } finally {
      globalThis.setTimeout = real;
      clock.dispose();
    }
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
