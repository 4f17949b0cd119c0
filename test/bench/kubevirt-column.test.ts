/**
 * The KubeVirt column of the benchmarks, its pure parts: which systems a row runs (the knobs),
 * their order per round, the requests the API server counted for an identity, the medians of
 * rounds, the ratios against KubeVirt's and the summary rows that judge them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { medianOfLeaves, mediansBySystem } from './support/burst-rounds.ts';
import { identityRequests } from './support/identity-requests.ts';
import { chooseSystems, roundOrder, runRounds, type Failure, type SystemName } from './support/system-choice.ts';
import { ratiosVsKubevirt, versusKubevirt } from './support/vs-kubevirt.ts';
import { kubevirtSection, kubevirtSummaryRows } from './report-kubevirt.ts';

const ALL: SystemName[] = ['baseline', 'serverless', 'kubevirt'];
// An executable that exists everywhere the tests run: the Node binary running them.
const BINARY = process.execPath;

describe('which systems a row runs', () => {
  const cases: { name: string; env: NodeJS.ProcessEnv; systems: SystemName[]; skipped?: RegExp }[] = [
    { name: 'no binary named: ours only, KubeVirt skipped saying why', env: {}, systems: ['baseline', 'serverless'], skipped: /KUBEVIRT_VIRT_CONTROLLER is not set/ },
    { name: 'a binary named: all three', env: { KUBEVIRT_VIRT_CONTROLLER: BINARY }, systems: ALL },
    { name: 'a path that is no file: skipped, naming it', env: { KUBEVIRT_VIRT_CONTROLLER: '/nonexistent/virt-controller' }, systems: ['baseline', 'serverless'], skipped: /\/nonexistent\/virt-controller: no such file/ },
    { name: 'BENCH_KUBEVIRT=0 turns it off', env: { KUBEVIRT_VIRT_CONTROLLER: BINARY, BENCH_KUBEVIRT: '0' }, systems: ['baseline', 'serverless'], skipped: /BENCH_KUBEVIRT=0/ },
    { name: 'BENCH_KUBEVIRT_ONLY=1: KubeVirt alone', env: { KUBEVIRT_VIRT_CONTROLLER: BINARY, BENCH_KUBEVIRT_ONLY: '1' }, systems: ['kubevirt'] },
    { name: 'BENCH_SYSTEMS picks', env: { KUBEVIRT_VIRT_CONTROLLER: BINARY, BENCH_SYSTEMS: 'serverless, kubevirt' }, systems: ['serverless', 'kubevirt'] },
    { name: 'BENCH_SYSTEMS without kubevirt says so', env: { KUBEVIRT_VIRT_CONTROLLER: BINARY, BENCH_SYSTEMS: 'serverless' }, systems: ['serverless'], skipped: /BENCH_SYSTEMS=serverless/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const lines: string[] = [];
      // act
      const choice = chooseSystems('row', ALL, (l) => lines.push(l), c.env);
      // assert
      assert.deepEqual(choice.systems, c.systems, 'the systems that run');
      if (c.skipped) {
        assert.match(choice.kubevirtSkipped ?? '', c.skipped, 'the reason is kept for the report');
        assert.equal(lines.length, 1, 'one line says it was skipped');
        assert.match(lines[0]!, /^row: KubeVirt's virt-controller skipped — /);
      } else assert.deepEqual(lines, [], 'nothing is said when it runs');
    });
  }

  test('a row without KubeVirt among its candidates says nothing of it', () => {
    // arrange, act
    const lines: string[] = [];
    const choice = chooseSystems('row', ['baseline', 'serverless'], (l) => lines.push(l), {});
    // assert
    assert.deepEqual(choice.systems, ['baseline', 'serverless']);
    assert.deepEqual(lines, []);
  });

  test('an unknown name in BENCH_SYSTEMS is a one-line error naming it', () => {
    // arrange, act, assert
    assert.throws(() => chooseSystems('row', ALL, () => undefined, { BENCH_SYSTEMS: 'serverles' }), /^Error: BENCH_SYSTEMS=serverles: unknown system serverles \(expected any of baseline, serverless, kubevirt\)$/);
  });

  test('the order rotates one place per round, so each system runs first once in three rounds', () => {
    // arrange, act
    const orders = [0, 1, 2, 3].map((i) => roundOrder(ALL, i));
    // assert
    assert.deepEqual(orders, [ALL, ['serverless', 'kubevirt', 'baseline'], ['kubevirt', 'baseline', 'serverless'], ALL]);
    assert.deepEqual(roundOrder(['baseline', 'serverless'], 1), ['serverless', 'baseline'], 'two systems alternate');
    assert.deepEqual(roundOrder([], 5), []);
  });
});

describe('rounds', () => {
  test("every system in each round, the order rotating; KubeVirt's failure is recorded and the rounds go on", async () => {
    // arrange
    const calls: string[] = [];
    const failures: Failure[] = [];
    const lines: string[] = [];
    let kubevirtRuns = 0;
    const run = async (sys: SystemName) => {
      calls.push(sys);
      if (sys === 'kubevirt' && kubevirtRuns++ === 0) throw new Error('it did not lead\nlog tail');
      return { seconds: calls.length };
    };
    // act
    const rounds = await runRounds('burst 10 (emulator)', ALL, 2, failures, run, (l) => lines.push(l));
    // assert
    assert.deepEqual(calls, ['baseline', 'serverless', 'kubevirt', 'serverless', 'kubevirt', 'baseline']);
    assert.deepEqual(rounds.map((r) => Object.keys(r.runs)), [['baseline', 'serverless'], ['serverless', 'kubevirt', 'baseline']], 'the failed run is absent from its round');
    assert.deepEqual(failures, [{ system: 'kubevirt', run: 'burst 10 (emulator), round 1', error: 'it did not lead\nlog tail' }]);
    assert.ok(lines.includes('kubevirt: burst 10 (emulator), round 1 failed: it did not lead'), 'one line, the first of the error');
    assert.deepEqual(mediansBySystem(ALL, rounds), { baseline: { seconds: 3.5 }, serverless: { seconds: 3 }, kubevirt: { seconds: 5 } });
  });

  test("our systems' failures are not swallowed", async () => {
    // arrange, act, assert
    await assert.rejects(runRounds('drain', ['serverless'], 1, [], async () => { throw new Error('boom'); }, () => undefined), /boom/);
  });
});

describe("an identity's requests as the API server counted them", () => {
  const c = (identity: string, verb: string, resource: string, count: number) => ({ identity, verb, resource, group: '', namespace: 'default', count });

  test('the window is after − before, per VMI, by kind and by call; other identities are left out', () => {
    // arrange
    const before = [c('kv', 'list', 'pods', 2), c('kv', 'create', 'pods', 1)];
    const after = [c('kv', 'list', 'pods', 2), c('kv', 'create', 'pods', 11), c('kv', 'update', 'virtualmachineinstances', 30), c('kv', 'create', 'events', 10), c('kv', 'get', 'pods', 5), c('other', 'get', 'pods', 99)];
    // act
    const r = identityRequests(before, after, 'kv', 10);
    // assert
    assert.deepEqual(r, {
      identity: 'kv',
      requestsPerVmi: 5.5,
      readsPerVmi: 0.5,
      writesPerVmi: 5,
      eventWritesPerVmi: 1,
      byCall: { 'update virtualmachineinstances': 3, 'create pods': 1, 'create events': 1, 'get pods': 0.5 },
    });
  });
});

describe('medians of rounds and the ratios against KubeVirt', () => {
  test('each number is the median of its own rounds; the shape is kept', () => {
    // arrange
    const runs = [{ a: 1, b: { c: 10, tag: 'x' } }, { a: 3, b: { c: 30, tag: 'y' } }, { a: 2, b: { c: 5 } }, undefined];
    // act, assert
    assert.deepEqual(medianOfLeaves(runs), { a: 2, b: { c: 10, tag: 'x' } });
    assert.equal(medianOfLeaves([undefined]), undefined, 'a system that never ran has no figures');
  });

  test('speeds read ≥ 1 when ours is faster, costs ours / KubeVirt\'s', () => {
    // arrange
    const ours = { lagAfterLastCreateRunningS: 10, lagAfterLastCreateScheduledS: 8, vmisPerSecondRunning: 50, requests: { requestsPerVmi: 12, writesPerVmi: 4 }, cpuMsPerVmi: 30, memory: { kbPerVmi: 5 } };
    const kubevirt = { lagAfterLastCreateRunningS: 20, lagAfterLastCreateScheduledS: 4, vmisPerSecondRunning: 25, requests: { requestsPerVmi: 8, writesPerVmi: 8 }, cpuMsPerVmi: 20, memory: { kbPerVmi: 100 } };
    // act
    const v = versusKubevirt(ours, kubevirt);
    // assert
    assert.deepEqual(v, { lagRunning: 2, lagScheduled: 0.5, vmisPerSecondRunning: 2, requestsPerVmi: 1.5, writesPerVmi: 0.5, cpuMsPerVmi: 1.5, memoryKbPerVmi: 0.05 });
    assert.deepEqual(ratiosVsKubevirt({ serverless: ours }), {}, 'no KubeVirt run, no ratios');
    assert.deepEqual(Object.keys(ratiosVsKubevirt({ serverless: ours, baseline: ours, kubevirt })), ['serverless', 'baseline']);
  });
});

describe('the report: issue 33 judged at 1,000 VMIs on the real control plane', () => {
  const e2e = (realVmis: number) => ({
    vmis: 200,
    ratios: { vsKubevirt: { serverless: { lagRunning: 1.2, requestsPerVmi: 1.4, writesPerVmi: 0.9 } } },
    real: { vmis: realVmis, ratios: { vsKubevirt: { serverless: { lagRunning: 0.5, vmisPerSecondRunning: 0.6, requestsPerVmi: 1.7, writesPerVmi: 1.1 } } } },
  });

  test('at 1,000 the real-lane speed rows are judged; below, they are reported and say why not', () => {
    // arrange, act
    const judged = kubevirtSummaryRows({ 'test/bench/e2e.bench.ts': e2e(1000) });
    const small = kubevirtSummaryRows({ 'test/bench/e2e.bench.ts': e2e(50) });
    // assert
    assert.equal(judged[0]!.met, false, 'lag 0.5× at 1,000 misses ≥ 1.0×');
    assert.equal(small[0]!.met, undefined, 'at 50 VMIs the target is not judged');
    assert.match(small[0]!.target, /judged at 1000 VMIs, this run had 50/);
    assert.equal(judged[3]!.met, false, 'requests 1.7× misses ≤ 1.5× at any size');
    assert.equal(small[3]!.met, false);
    assert.equal(judged[2]!.met, true, 'the emulator lag 1.2× keeps ≥ 1.0×');
  });

  test('a skipped KubeVirt column says so in the summary and in the section', () => {
    // arrange
    const results = { 'test/bench/e2e.bench.ts': { vmis: 200, kubevirtSkipped: 'KUBEVIRT_VIRT_CONTROLLER is not set (the path)', real: { skipped: 'BENCH_REAL=0' } } };
    // act
    const rows = kubevirtSummaryRows(results);
    const md = kubevirtSection(results).join('\n');
    // assert
    assert.equal(rows[0]!.measured, 'not run');
    assert.match(rows[0]!.figure, /KubeVirt's skipped: BENCH_REAL=0/);
    assert.match(rows[2]!.figure, /KubeVirt's skipped: KUBEVIRT_VIRT_CONTROLLER is not set/);
    assert.match(md, /KubeVirt's column: skipped: KUBEVIRT_VIRT_CONTROLLER is not set/);
  });
});
