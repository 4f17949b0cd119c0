/**
 * The cost model's arithmetic (test/bench/cost-model.ts): Lambda's CPU in proportion to memory,
 * the memory sizes compared, the log volume beside the total; and report.ts pricing each round of
 * the function footprint benchmark from its own figures. Pure; no benchmark runs here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { costByMemory, costPerMillionReconciles, cpuStretch, FOOTPRINT_ROUNDS, type CostInputs } from './cost-model.ts';
import { deriveCost, footprintCosts, renderMarkdown, summaryRows } from './report.ts';

const base: CostInputs = {
  memoryMb: 512,
  batchSize: 1,
  invocationMs: 100,
  coldStartShare: 0,
  coldInitMs: 0,
  keysSentPerReconcile: 1,
  tableReadsPerReconcile: 1,
  tableWritesPerReconcile: 1,
  requeuesPerReconcile: 0,
};

describe('cost model', () => {
  test('CPU runs 1,769 / memory times slower below a full vCPU, never faster above it', () => {
    assert.equal(cpuStretch(1769), 1);
    assert.equal(cpuStretch(3538), 1);
    assert.ok(Math.abs(cpuStretch(256) - 6.91) < 0.01);
  });

  test('without a measured CPU time the wall time is billed as measured (the old model)', () => {
    const c = costPerMillionReconciles(base);
    // 1e6 invocations × 0.1 s × 0.5 GB × $0.0000133334
    assert.equal(c.lambdaDuration, 0.667);
    assert.equal(c.billedMsPerInvocation, 100);
    assert.equal(c.logs, undefined);
  });

  test('a measured CPU time is stretched at the chosen memory: billed = wall + CPU × (stretch − 1)', () => {
    const c = costPerMillionReconciles({ ...base, memoryMb: 256, cpuMsPerInvocation: 10 });
    assert.equal(c.billedMsPerInvocation, Math.round((100 + 10 * (1769 / 256 - 1)) * 10) / 10);
  });

  test('the cheapest size that holds the function is chosen; smaller ones are not costed', () => {
    const { cheapest, sizes } = costByMemory({ ...base, cpuMsPerInvocation: 10 }, 200);
    assert.deepEqual(sizes.map((s) => s.memoryMb), [256, 512, 1024, 1769]);
    assert.equal(cheapest.memoryMb, 256, 'the smallest that fits is cheapest');
    // Below a full vCPU the CPU part costs the same GB-seconds at any size (slower × smaller):
    // only the waiting part scales with memory, so even a CPU-bound function is cheapest small.
    const cpuBound = costByMemory({ ...base, invocationMs: 100, cpuMsPerInvocation: 95 }, 200);
    assert.equal(cpuBound.cheapest.memoryMb, 256);
    const [at256, at512] = cpuBound.sizes;
    assert.ok(at256!.billedMsPerInvocation > 1.9 * at512!.billedMsPerInvocation - 100, 'but it takes about twice as long');
  });

  test('without a measured CPU time only the configured size is costed', () => {
    const { sizes } = costByMemory(base, 200);
    assert.deepEqual(sizes.map((s) => s.memoryMb), [512]);
  });

  test('the log volume is priced beside the total, not in it', () => {
    const c = costPerMillionReconciles({ ...base, logBytesPerReconcile: 1024 });
    assert.equal(c.logs, Math.round((1e6 * 1024 / 1024 ** 3) * 0.5 * 1000) / 1000);
    assert.equal(c.total, costPerMillionReconciles(base).total);
  });

  describe('the footprint rounds, each priced from its own figures', () => {
    // As function-footprint.bench.ts writes them (the figures the cost rests on; the rest are unused).
    const round = (keys: number, concurrency: number, wallMs: number, cpuMs: number) => ({ batchSize: keys === 1 ? 1 : 10, keyBatchConcurrency: concurrency, keysPerInvocation: keys, invocationAvgMs: wallMs, cpuMsPerInvocation: cpuMs, maxRssMb: 140, logBytesPerKey: 600, traceWrusPerReconcile: 0.1, importMs: 80 });
    const footprint = { vmis: 100, batch1: round(1, 1, 20, 8), batch10OneAtATime: round(10, 1, 300, 45), batch10: round(10, 10, 100, 40) };
    const batching = { batch1: { tableReadsPerReconcile: 0.2, tableWritesPerReconcile: 0.12 }, batch10: { tableReadsPerReconcile: 0.09, tableWritesPerReconcile: 0.07 } };

    test('the measured wall time, CPU, keys per invocation, logs and trace units are the round\'s inputs; the rest from the other benchmarks', () => {
      const priced = footprintCosts({ 'test/bench/function-footprint.bench.ts': footprint, 'test/bench/batching.bench.ts': batching });
      assert.deepEqual(priced.map((p) => [p.key, p.batchSize, p.keyConcurrency]), FOOTPRINT_ROUNDS.map((r) => [r.key, r.batchSize, r.keyConcurrency]));
      const seq = priced.find((p) => p.key === 'batch10OneAtATime')!;
      assert.equal(seq.keyConcurrency, 1);
      assert.equal(seq.inputs.invocationMs, 300);
      assert.equal(seq.inputs.cpuMsPerInvocation, 45);
      assert.equal(seq.inputs.batchSize, 10);
      assert.equal(seq.inputs.logBytesPerReconcile, 600);
      assert.equal(seq.inputs.tableReadsPerReconcile, 0.09, 'the batching bench\'s batch-10 round');
      assert.equal(seq.inputs.tableWritesPerReconcile, 0.07 + 0.1, 'expectations writes plus the measured trace units');
      assert.equal(priced[0]!.inputs.tableReadsPerReconcile, 0.2, 'batch 1 takes the batching bench\'s batch-1 round');
      // A round measured before the benchmark read its trace items back: the batching bench's units.
      const { traceWrusPerReconcile: _, ...older } = footprint.batch10;
      const [old] = footprintCosts({ 'test/bench/function-footprint.bench.ts': { batch10: older }, 'test/bench/batching.bench.ts': { batch10: { ...batching.batch10, traceWrusPerReconcile: 0.23 } } });
      assert.equal(old!.inputs.tableWritesPerReconcile, 0.07 + 0.23);
      // 140 MB peak with half again as headroom: 210 MB, so 256 MB is the smallest size costed.
      assert.equal(seq.minMemoryMb, 210);
      assert.deepEqual(seq.sizes.map((z) => z.memoryMb), [256, 512, 1024, 1769]);
      assert.deepEqual(seq.atDefaultMemory, costPerMillionReconciles(seq.inputs));
      assert.equal(seq.cheapest.total, Math.min(...seq.sizes.map((z) => z.total)));
      // Keys one after another hold the instance longer than keys at once: more GB-seconds.
      const all = priced.find((p) => p.key === 'batch10')!;
      assert.ok(seq.cheapest.lambdaDuration > all.cheapest.lambdaDuration);
    });

    test('each round is a summary row naming its concurrency beside the $1 target; a round that did not run says so', () => {
      const results: Record<string, unknown> = { 'test/bench/function-footprint.bench.ts': { vmis: 100, batch1: footprint.batch1, batch10: footprint.batch10 } };
      deriveCost(results);
      const summary = summaryRows(results);
      const rowOf = (label: string) => summary.filter((r) => r.figure === `cost per million reconciles, ${label} ($)` || r.figure.startsWith(`cost per million reconciles, ${label}, `));
      const rows = FOOTPRINT_ROUNDS.flatMap((round) => rowOf(round.label));
      assert.equal(rows.length, 3, 'one row per round');
      assert.match(rows[0]!.figure, /^cost per million reconciles, batch 1 \(-c batchSize=1\), 256 MB/);
      const seq = rows.find((r) => r.figure.includes('one at a time'))!;
      assert.equal(seq.measured, 'not run');
      assert.equal(seq.met, undefined);
      const all = rows.find((r) => r.figure.includes('all at once'))!;
      assert.match(all.figure, /batchConcurrency=10/);
      const priced = footprintCosts(results);
      assert.equal(all.measured, String(priced.find((p) => p.key === 'batch10')!.cheapest.total));
      assert.equal(all.met, priced.find((p) => p.key === 'batch10')!.cheapest.total <= 1);
      assert.match(all.target, /≤ 1/);
      const md = renderMarkdown({ generatedAt: 'now', node: '24', cpus: 2, results });
      assert.match(md, /### Per round of the function footprint benchmark/);
      assert.match(md, /\| batch 10, keys one at a time \(the default: batchSize 10, batchConcurrency 1\) \| 1 \| not run/);
    });
  });
});
