import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { medianRuns } from './support/burst-rounds.ts';
import { median } from './support/stats.ts';
import { burstRoundsNote } from './report.ts';

describe('burst rounds: medians of rounds, every round kept', () => {
  test('median of odd and even counts; none is NaN', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  test("each system's median run is its own, whole (the breakdown comes with it)", () => {
    const run = (v: number, tag: string) => ({ vmisPerSecondScheduled: v, tag });
    const rounds = [
      { baseline: run(56.9, 'b1'), serverless: run(49.9, 's1') },
      { baseline: run(50.1, 'b2'), serverless: run(55.0, 's2') },
      { baseline: run(60.0, 'b3'), serverless: run(52.0, 's3') },
    ];
    const m = medianRuns(rounds);
    assert.equal(m.baseline!.tag, 'b1');
    assert.equal(m.serverless!.tag, 's3');
    assert.equal(medianRuns([{ baseline: run(1, 'x') }, { baseline: run(3, 'y') }]).baseline!.tag, 'x', 'the lower middle of two');
  });

  test("the summary row says how the ratio was formed and gives each round's", () => {
    assert.equal(burstRoundsNote({ ratios: { throughputRounds: [0.88, 0.95, 1.02] } }), 'medians of 3 rounds; each round: 0.88×, 0.95×, 1.02×');
    assert.equal(burstRoundsNote({ ratios: { throughputRounds: [0.9] } }), 'one round');
    assert.equal(burstRoundsNote(undefined), 'one round');
  });
});
