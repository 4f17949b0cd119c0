/** The bench's own time budget as a summary row (report.ts): 30 minutes in full, 5 quick. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderMarkdown, runTimeRow } from './report.ts';

test('run time: judged against 30 min in full and 5 quick; a run of only some files has no total', () => {
  assert.deepEqual(runTimeRow({ quick: false, totalSeconds: 1740 }), { figure: 'whole `npm run bench` run time', measured: '29 min', target: '≤ 30 min', met: true });
  assert.equal(runTimeRow({ quick: false, totalSeconds: 1860 }).met, false);
  assert.deepEqual(runTimeRow({ quick: true, totalSeconds: 270 }), { figure: 'whole `npm run bench` run time (BENCH_QUICK=1)', measured: '4.5 min', target: '≤ 5 min', met: true });
  assert.equal(runTimeRow({ quick: true, secondsByFile: { 'test/bench/queue.bench.ts': 12 } }).measured, 'not run');
  assert.equal(runTimeRow(undefined).measured, 'not run');
});

test('run time by file: a table in the report', () => {
  const md = renderMarkdown({ generatedAt: 'now', node: '24', cpus: 2, run: { quick: false, totalSeconds: 600, secondsByFile: { 'test/bench/e2e.bench.ts': 420, 'test/bench/queue.bench.ts': 180 } }, results: {} });
  assert.match(md, /## Run time by file/);
  assert.match(md, /\| `test\/bench\/e2e.bench.ts` \| 7 \|/);
  assert.match(md, /\| whole `npm run bench` run time \| 10 min \| ≤ 30 min \| yes \|/);
});
