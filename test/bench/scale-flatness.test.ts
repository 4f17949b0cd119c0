/**
 * The 10,000-VMI rows' flatness ratios (test/bench/report.ts): taken from the scale run's own
 * reference burst, measured minutes before on the same machine, when the run took one; from the
 * e2e run's burst at 300 only for results recorded before the scale run took its own.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { summaryRows } from './report.ts';

const e2e = { smallVmis: 300, throughputSmall: { serverless: { vmisPerSecondScheduled: 50, breakdown: { apiCallP50Ms: 10 } } } };
const big = { vmisPerSecondScheduled: 60, breakdown: { apiCallP50Ms: 15 }, running: { secondsToAllRunning: 170, allRunning: true } };

const flatnessRows = (results: Record<string, unknown>) => summaryRows(results).filter((r) => r.figure.startsWith('burst') && r.figure.includes('10000'));

test("the scale run's own reference burst decides the flatness rows", () => {
  // arrange
  const scale = { vmis: 10_000, serverless: big, reference: { vmis: 300, serverless: { vmisPerSecondScheduled: 40, breakdown: { apiCallP50Ms: 14 } } }, flatness: { vmisPerSecondRatio: 1.5, apiCallP50Ratio: 1.07 } };

  // act
  const rows = flatnessRows({ 'test/bench/e2e.bench.ts': e2e, 'test/bench/scale.bench.ts': scale });

  // assert
  assert.deepEqual(rows.map((r) => [r.figure, r.measured, r.met]), [
    ['burst VMIs/s at 10000 / at 300 VMIs, serverless (same run)', '1.5×', true],
    ['burst API call p50 at 10000 / at 300 VMIs, serverless (same run)', '1.07×', true],
  ]);
});

test("without one (an older result), the e2e run's burst at 300, and the row says so", () => {
  // act
  const rows = flatnessRows({ 'test/bench/e2e.bench.ts': e2e, 'test/bench/scale.bench.ts': { vmis: 10_000, serverless: big } });

  // assert
  assert.deepEqual(rows.map((r) => [r.figure, r.measured, r.met]), [
    ['burst VMIs/s at 10000 / at 300 VMIs, serverless (against the e2e run)', '1.2×', true],
    ['burst API call p50 at 10000 / at 300 VMIs, serverless (against the e2e run)', '1.5×', false],
  ]);
});
