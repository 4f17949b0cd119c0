/**
 * The cost model's arithmetic (test/bench/cost-model.ts): Lambda's CPU in proportion to memory,
 * the memory sizes compared, the log volume beside the total. Pure; no benchmark runs here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { costByMemory, costPerMillionReconciles, cpuStretch, type CostInputs } from './cost-model.ts';

const base: CostInputs = {
  memoryMb: 512,
  batchSize: 1,
  reconcileMs: 100,
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
    const cpuBound = costByMemory({ ...base, reconcileMs: 100, cpuMsPerInvocation: 95 }, 200);
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
});
