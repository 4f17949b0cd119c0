/**
 * The live differential lane (`npm run differential:live`; opt-in, in neither `npm test` nor CI):
 * KubeVirt's virt-controller (KUBEVIRT_VIRT_CONTROLLER=<binary>) and ours on twin sandboxes
 * through the scenarios of scenarios.ts, their objects compared after normalise.ts. One test per
 * scenario: it passes when the two runs are identical and otherwise fails listing the
 * differences. Without the binary every test skips, saying why in one line.
 * LIVE_DIFFERENTIAL_REPORT=<file> writes every verdict and both sides' raw objects as JSON; LIVE_SCENARIOS=a,b runs some.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { kubevirtSetup } from '../../bench/support/kubevirt.ts';
import { compareRuns, formatVerdict, type ScenarioVerdict } from './compare.ts';
import { runSide, type ScenarioRun } from './lane.ts';
import { SCENARIOS } from './scenarios.ts';

const setup = kubevirtSetup();
const skip = 'skipped' in setup ? `live differential lane: ${setup.skipped}` : false;
const only = process.env.LIVE_SCENARIOS?.split(',').map((s) => s.trim()).filter(Boolean);
const scenarios = only ? SCENARIOS.filter((s) => only.includes(s.name)) : SCENARIOS;

describe("live differential: KubeVirt's virt-controller and ours on twin sandboxes", { skip }, () => {
  const verdicts = new Map<string, ScenarioVerdict>();
  before(async () => {
    const log = (line: string) => process.stderr.write(`${line}\n`);
    // One side after the other: the machine is small, and each side gets it to itself.
    const kv = await runSide('kubevirt', scenarios, log);
    const ours = await runSide('ours', scenarios, log);
    log(`KubeVirt's virt-controller reached the API server ${kv.path}; ours on ${ours.path}`);
    const report = process.env.LIVE_DIFFERENTIAL_REPORT;
    // The raw runs first: a comparison that throws must not lose minutes of scenarios.
    if (report) writeFileSync(report, JSON.stringify({ kubevirtApiPath: kv.path, runs: { ours: ours.runs, kubevirt: kv.runs } }, null, 1));
    const byName = (runs: ScenarioRun[]) => new Map(runs.map((r) => [r.scenario, r]));
    const a = byName(ours.runs);
    const b = byName(kv.runs);
    for (const s of scenarios) verdicts.set(s.name, compareRuns(a.get(s.name)!, b.get(s.name)!));
    if (report) writeFileSync(report, JSON.stringify({ kubevirtApiPath: kv.path, verdicts: [...verdicts.values()], runs: { ours: ours.runs, kubevirt: kv.runs } }, null, 1));
  });

  for (const s of scenarios) {
    test(s.name, () => {
      const v = verdicts.get(s.name);
      assert.ok(v, `no verdict for ${s.name}`);
      assert.ok(v.identical, formatVerdict(v));
    });
  }
});
