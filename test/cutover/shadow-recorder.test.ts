/**
 * Shadow mode's judge over time (docs/cutover.md): a decision agrees with any version the watch
 * showed within the window, falls back to a read when the watch showed none, is superseded by a
 * later decision on the same object part or by a later reconcile of the key that leaves the object
 * as it is, and a divergence is stored with its differing fields.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import type { ShadowWrite } from '../../shared/kube/guarded-writes.ts';
import { ShadowRecorder, type Divergence } from '../../shared/cutover/shadow-recorder.ts';

const patch = (phase: string): ShadowWrite => ({ verb: 'patch', method: 'patch', resource: VMIS, subresource: undefined, namespace: 'default', name: 'a', body: { status: { phase } }, patchType: 'merge', answer: { result: {} } });
const vmi = (phase: string) => ({ metadata: { name: 'a', namespace: 'default' }, status: { phase } });

function recorder(live: unknown[] = []) {
  let now = 1_000_000;
  const found: Divergence[] = [];
  const reads: string[] = [];
  const r = new ShadowRecorder({ sink: { add: (d) => void found.push(d) }, read: async (t) => (reads.push(`${t.kind}/${t.name}`), live), windowMs: 1000, lateMs: 2000, now: () => now });
  return { r, found, reads, tick: (ms: number) => (now += ms) };
}

test('a decision the watch showed within the window agrees, without a read', async () => {
  // arrange
  const { r, found, reads, tick } = recorder();
  r.record('vmi', 'default/a', patch('Scheduling'));
  tick(300);
  r.observe('VirtualMachineInstance', 'MODIFIED', vmi('Scheduling'));
  tick(300);
  r.observe('VirtualMachineInstance', 'MODIFIED', vmi('Running'));
  tick(1000);
  // act
  await r.judge();
  // assert
  assert.deepEqual([r.counts, found, reads], [{ decisions: 1, agreed: 1, diverged: 0, superseded: 0 }, [], []]);
});

test('a decision the watch never showed is read, waited for while the live controller may be late, then stored as a divergence with its fields', async () => {
  // arrange
  const { r, found, reads, tick } = recorder([vmi('Running')]);
  r.record('vmi', 'default/a', patch('Failed'));
  tick(1000);
  // act
  await r.judge();
  const early = [r.pending, found.length];
  tick(1000);
  await r.judge();
  // assert
  assert.deepEqual(early, [1, 0], 'not a divergence before lateMs');
  assert.deepEqual(reads, ['VirtualMachineInstance/a', 'VirtualMachineInstance/a']);
  assert.equal(r.counts.diverged, 1);
  assert.deepEqual(found.map((d) => [d.controller, d.key, d.write, d.object, d.fields]), [['vmi', 'default/a', 'patch virtualmachineinstances', 'VirtualMachineInstance default/a', [{ path: 'status.phase', ours: 'Failed', live: 'Running' }]]]);
});

test('a later decision on the same object part supersedes an earlier one not yet judged', async () => {
  // arrange
  const { r, found, tick } = recorder([vmi('Running')]);
  r.record('vmi', 'default/a', patch('Scheduled'));
  tick(200);
  r.record('vmi', 'default/a', patch('Running'));
  tick(1000);
  // act
  await r.judge();
  // assert
  assert.deepEqual([r.counts, found], [{ decisions: 2, agreed: 1, diverged: 0, superseded: 1 }, []]);
});

test('a decision younger than the window waits', async () => {
  // arrange
  const { r, tick } = recorder([vmi('Running')]);
  r.record('vmi', 'default/a', patch('Running'));
  tick(500);
  // act
  await r.judge();
  // assert
  assert.deepEqual([r.pending, r.counts.agreed], [1, 0]);
});

test('a read that fails is no verdict: the decision is judged again', async () => {
  // arrange
  let fail = true;
  let now = 0;
  const r = new ShadowRecorder({ sink: { add: () => assert.fail('no divergence') }, read: async () => { if (fail) throw new Error('ECONNRESET'); return [vmi('Running')]; }, windowMs: 1000, now: () => now });
  r.record('vmi', 'default/a', patch('Running'));
  now += 1000;
  // act
  await r.judge();
  const after1 = r.pending;
  fail = false;
  await r.judge();
  // assert
  assert.deepEqual([after1, r.pending, r.counts.agreed], [1, 0, 1]);
});

const create: ShadowWrite = { verb: 'create', method: 'create', resource: PODS, subresource: undefined, namespace: 'default', name: undefined, generateName: 'virt-launcher-a-', body: {}, answer: { result: { metadata: { name: 'virt-launcher-a-bcdfg' }, spec: { nodeName: 'ours' } } } };

const SETTLED: { name: string; write: ShadowWrite; key: string; begunMs: number; agreed: number; superseded: number; diverged: number }[] = [
  { name: 'a later reconcile of the key that leaves the object as the live controller made it settles an intermediate update', write: patch('Scheduled'), key: 'default/a', begunMs: 100, agreed: 0, superseded: 1, diverged: 0 },
  { name: 'a settled decision the live object showed still counts as agreed', write: patch('Running'), key: 'default/a', begunMs: 100, agreed: 1, superseded: 0, diverged: 0 },
  { name: 'a reconcile begun before the decision settles nothing', write: patch('Scheduled'), key: 'default/a', begunMs: -1, agreed: 0, superseded: 0, diverged: 1 },
  { name: "another key's reconcile settles nothing", write: patch('Scheduled'), key: 'default/b', begunMs: 100, agreed: 0, superseded: 0, diverged: 1 },
  { name: 'a create is never settled (the live controller made its own object)', write: create, key: 'default/a', begunMs: 100, agreed: 0, superseded: 0, diverged: 1 },
];

for (const c of SETTLED) {
  test(`settled: ${c.name}`, async () => {
    // arrange
    const { r, found, tick } = recorder([vmi('Running')]);
    const at = tick(0);
    r.record('vmi', 'default/a', c.write);
    tick(200);
    // act
    r.settled('vmi', c.key, at + c.begunMs);
    tick(2000);
    await r.judge();
    // assert
    assert.deepEqual([r.counts.agreed, r.counts.superseded, r.counts.diverged, found.length, r.pending], [c.agreed, c.superseded, c.diverged, c.diverged, 0]);
  });
}
