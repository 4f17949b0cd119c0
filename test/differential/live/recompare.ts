/**
 * `node test/differential/live/recompare.ts <report.json>`: the verdicts of a saved live run
 * (LIVE_DIFFERENTIAL_REPORT) again, with the normalisation as it is now — for working on
 * normalise.ts or compare.ts without running both controllers again.
 */
import { readFileSync } from 'node:fs';
import { compareRuns, formatVerdict } from './compare.ts';
import type { ScenarioRun } from './lane.ts';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node test/differential/live/recompare.ts <report.json>\n');
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, 'utf8')) as { runs?: { ours: ScenarioRun[]; kubevirt: ScenarioRun[] } };
if (!report.runs) {
  process.stderr.write(`${file}: no raw runs in this report (written before the runs were kept)\n`);
  process.exit(1);
}
const theirs = new Map(report.runs.kubevirt.map((r) => [r.scenario, r]));
for (const ours of report.runs.ours) {
  const kv = theirs.get(ours.scenario);
  if (kv) process.stdout.write(`${formatVerdict(compareRuns(ours, kv), 400)}\n`);
}
