import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { VirtualMachinePool } from '../../../shared/api/index.ts';
import { addFinalizerOps, releaseOps, removeFinalizerOps, removeOwnerOps } from '../../../functions/pool/patches.ts';
import { computePoolStatus } from '../../../functions/pool/pool-status.ts';
import { isOutdated, prunableRevisions, renderRevision, revisionName, semanticallyEqual } from '../../../functions/pool/revisions.ts';
import { classify, maxUnavailableOf, planProactive } from '../../../functions/pool/update-plan.ts';
import { POOL_FINALIZER } from '../../../functions/pool/well-known.ts';
import { poolManifest, poolVm, poolVmi } from './fixtures.ts';

/** A pool at `generation` whose template's VMI spec carries `image` (and DataVolume templates `dvs`). */
function poolAt(generation: number, image = 'img:1', dvs: string[] = []): VirtualMachinePool {
  const p = poolManifest('p');
  p.metadata = { ...p.metadata, uid: 'pool-uid', generation };
  const t = p.spec.virtualMachineTemplate.spec!;
  t.template.spec!.volumes = [{ name: 'root', containerDisk: { image } }];
  if (dvs.length) t.dataVolumeTemplates = dvs.map((n) => ({ metadata: { name: n }, spec: {} }) as never);
  return p;
}

function revisions(...pools: VirtualMachinePool[]): Map<string, V1ControllerRevision> {
  return new Map(pools.map((p) => [revisionName(p), renderRevision(p)]));
}

describe('revisions', () => {
  test('name <pool>-<generation>, the whole spec as data, the pool as controller, no labels', () => {
    // act
    const rev = renderRevision(poolAt(4));
    // assert
    assert.equal(rev.metadata?.name, 'p-4');
    assert.equal(rev.revision, 4);
    assert.deepEqual(rev.data, poolAt(4).spec);
    assert.equal(rev.metadata?.labels, undefined);
    assert.deepEqual(rev.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['VirtualMachinePool', 'pool-uid', true]]);
  });

  const outdated: Array<{ name: string; vm: ReturnType<typeof poolVm>; revs: Map<string, V1ControllerRevision>; want: boolean }> = [
    { name: 'same template at an older generation: up to date', vm: poolVm('p-0', { revision: 'p-1' }), revs: revisions(poolAt(1)), want: false },
    { name: 'a template change: outdated', vm: poolVm('p-0', { revision: 'p-1' }), revs: revisions(poolAt(1, 'img:0')), want: true },
    { name: 'no revision label: outdated', vm: poolVm('p-0'), revs: revisions(poolAt(1)), want: true },
    { name: 'revision unknown: outdated', vm: poolVm('p-0', { revision: 'p-9' }), revs: revisions(poolAt(1)), want: true },
  ];
  for (const c of outdated) test(c.name, () => assert.equal(isOutdated(c.vm, c.revs, poolAt(2)), c.want));

  const semantic: Array<[string, unknown, unknown, boolean]> = [
    ['nil and empty map', { a: {} }, {}, true],
    ['nil and empty list', { a: [] }, { a: null }, true],
    ['key order', { a: 1, b: 2 }, { b: 2, a: 1 }, true],
    ['a value differs', { a: 1 }, { a: 2 }, false],
  ];
  for (const [name, a, b, want] of semantic) test(`semantic equality: ${name}`, () => assert.equal(semanticallyEqual(a, b), want));

  test('pruning keeps revisions a VM or its VMI names, drops the rest (the current one too, Q-P12)', () => {
    // arrange
    const revs = revisions(poolAt(1), poolAt(2), poolAt(3), poolAt(4));
    const vms = [poolVm('p-0', { revision: 'p-3' }), poolVm('p-1', { revision: 'p-3' })];
    const vmis = new Map([['p-1', poolVmi('p-1', { revision: 'p-2' })]]);
    // act
    const got = prunableRevisions(revs, vms, vmis);
    // assert
    assert.deepEqual(got, ['p-1', 'p-4']);
  });
});

describe('proactive update', () => {
  const revs = revisions(poolAt(1), poolAt(2, 'img:2'), poolAt(3, 'img:1', ['disk']));
  const cases: Array<{ name: string; vm: string; vmi: string | undefined; want: string }> = [
    { name: 'same revision: none', vm: 'p-2', vmi: 'p-2', want: 'none' },
    { name: 'VMI without a revision label: restart', vm: 'p-2', vmi: undefined, want: 'restart' },
    { name: 'VMI template differs: restart', vm: 'p-2', vmi: 'p-1', want: 'restart' },
    { name: 'DataVolume templates differ: delete the VM', vm: 'p-3', vmi: 'p-1', want: 'vm-delete' },
    { name: "the VMI's revision is gone: restart", vm: 'p-1', vmi: 'p-9', want: 'restart' },
  ];
  for (const c of cases) {
    test(`classify: ${c.name}`, () => assert.equal(classify(poolVm('p-0', { revision: c.vm }), poolVmi('p-0', c.vmi ? { revision: c.vmi } : {}), revs), c.want));
  }
  test('classify: identical VMI templates under two revisions → label-patch', () => {
    // arrange: generation 5 only changes the VM's labels
    const p5 = poolAt(5);
    p5.spec.virtualMachineTemplate.metadata = { labels: { app: 'p', extra: 'x' } };
    const r = revisions(poolAt(1), p5);
    // act / assert
    assert.equal(classify(poolVm('p-0', { revision: 'p-5' }), poolVmi('p-0', { revision: 'p-1' }), r), 'label-patch');
  });

  const budgets: Array<[string | number | undefined, number, number]> = [
    [undefined, 4, 4],
    ['50%', 5, 2],
    ['10%', 3, 1],
    [2, 10, 2],
    [0, 10, 1],
  ];
  for (const [v, replicas, want] of budgets) test(`maxUnavailable ${String(v)} of ${replicas} = ${want}`, () => assert.equal(maxUnavailableOf(v, replicas), want));
  test('maxUnavailable that is not a percentage is an error', () => assert.throws(() => maxUnavailableOf('half', 4), /invalid maxUnavailable percentage/));

  test('within the budget: one VMI at a time with maxUnavailable 1, then the 3-second requeue', () => {
    // arrange: three Ready VMs at p-2 whose VMIs run p-1
    const pool = { ...poolAt(2, 'img:2'), spec: { ...poolAt(2, 'img:2').spec, maxUnavailable: 1, replicas: 3, updateStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder' } } } } };
    const vms = ['p-0', 'p-1', 'p-2'].map((n) => poolVm(n, { revision: 'p-2', ready: true }));
    const vmis = new Map(vms.map((v) => [v.metadata!.name!, poolVmi(v.metadata!.name!, { revision: 'p-1' })]));
    // act
    const plan = planProactive(pool, vms, vmis, revisions(poolAt(1), poolAt(2, 'img:2')), 3, Math.random);
    // assert
    assert.deepEqual(plan.budgeted.map((a) => [a.vm.metadata?.name, a.action]), [['p-0', 'restart']]);
    assert.equal(plan.budgetExhausted, true);
    assert.deepEqual(plan.unhealthy, []);
  });

  test('unavailable VMIs use the budget up: nothing more is restarted', () => {
    // arrange: one VMI not Running yet, maxUnavailable 1
    const pool = { ...poolAt(2, 'img:2'), spec: { ...poolAt(2, 'img:2').spec, maxUnavailable: 1, replicas: 2 } };
    const vms = ['p-0', 'p-1'].map((n) => poolVm(n, { revision: 'p-2', ready: true }));
    const vmis = new Map([
      ['p-0', poolVmi('p-0', { revision: 'p-2', phase: 'Scheduled', ready: false })],
      ['p-1', poolVmi('p-1', { revision: 'p-1' })],
    ]);
    // act
    const plan = planProactive(pool, vms, vmis, revisions(poolAt(1), poolAt(2, 'img:2')), 2, Math.random);
    // assert
    assert.deepEqual(plan.budgeted, []);
    assert.equal(plan.budgetExhausted, true);
  });

  test('VMs not Ready go first, outside the budget; a none is still reported (Q-P9)', () => {
    // arrange
    const pool = { ...poolAt(2, 'img:2'), spec: { ...poolAt(2, 'img:2').spec, maxUnavailable: 1, replicas: 3 } };
    const vms = [poolVm('p-0', { revision: 'p-2', ready: false }), poolVm('p-1', { revision: 'p-2', ready: false }), poolVm('p-2', { revision: 'p-2', ready: true })];
    const vmis = new Map([
      ['p-0', poolVmi('p-0', { revision: 'p-1', ready: false })],
      ['p-1', poolVmi('p-1', { revision: 'p-2', ready: false })],
      ['p-2', poolVmi('p-2', { revision: 'p-1' })],
    ]);
    // act
    const plan = planProactive(pool, vms, vmis, revisions(poolAt(1), poolAt(2, 'img:2')), 3, Math.random);
    // assert
    assert.deepEqual(plan.unhealthy.map((a) => [a.vm.metadata?.name, a.action]), [['p-0', 'restart'], ['p-1', 'none']]);
    assert.deepEqual(plan.budgeted, [], 'p-0 and p-1 are unavailable: the budget of 1 is spent');
  });
});

describe('pool status', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  test('counts include deleting VMs; ready from the VMs Ready condition; selector string', () => {
    // arrange
    const pool = poolAt(1);
    pool.spec.selector = { matchLabels: { app: 'p' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] };
    const vms = [poolVm('p-0', { ready: true }), poolVm('p-1', { ready: false }), poolVm('p-2', { deleting: true, ready: true })];
    // act
    const { status, events } = computePoolStatus(pool, vms, undefined, now);
    // assert
    assert.deepEqual([status.replicas, status.readyReplicas, status.labelSelector], [3, 2, 'app=p,tier in (a,b)']);
    assert.deepEqual(events, []);
  });

  const conditions: Array<{ name: string; paused: boolean; before: string[]; error: boolean; want: string[]; events: string[] }> = [
    { name: 'a sync error adds ReplicaFailure and a Warning', paused: false, before: [], error: true, want: ['ReplicaFailure'], events: ['Warning FailedScaleOut'] },
    { name: 'an existing ReplicaFailure is kept, no new event', paused: false, before: ['ReplicaFailure'], error: true, want: ['ReplicaFailure'], events: [] },
    { name: 'a clean pass removes it', paused: false, before: ['ReplicaFailure'], error: false, want: [], events: [] },
    { name: 'paused: ReplicaPaused + SuccessfulPaused', paused: true, before: [], error: false, want: ['ReplicaPaused'], events: ['Normal SuccessfulPaused'] },
    { name: 'unpaused: removed + SuccessfulResume', paused: false, before: ['ReplicaPaused'], error: false, want: [], events: ['Normal SuccessfulResume'] },
  ];
  for (const c of conditions) {
    test(c.name, () => {
      // arrange
      const pool = poolAt(1);
      pool.spec.paused = c.paused;
      pool.status = { conditions: c.before.map((type) => ({ type, status: 'True', reason: 'old', message: 'old' })) };
      // act
      const r = computePoolStatus(pool, [], c.error ? { reason: 'FailedScaleOut', message: 'error during scale out: boom' } : undefined, now);
      // assert
      assert.deepEqual((r.status.conditions ?? []).map((x) => x.type), c.want);
      assert.deepEqual(r.events.map((e) => `${e.type} ${e.reason}`), c.events);
    });
  }
});

describe('metadata patches', () => {
  test('adding the finalizer keeps the others (upstream drops them, Q-P5)', () => {
    assert.deepEqual(addFinalizerOps({ metadata: { finalizers: ['other'] } }), [
      { op: 'test', path: '/metadata/finalizers', value: ['other'] },
      { op: 'add', path: '/metadata/finalizers/-', value: POOL_FINALIZER },
    ]);
  });
  test('adding to no finalizers is guarded by the resourceVersion', () => {
    assert.deepEqual(addFinalizerOps({ metadata: { resourceVersion: '5' } }), [
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'add', path: '/metadata/finalizers', value: [POOL_FINALIZER] },
    ]);
  });
  test('present: nothing to add; absent: nothing to remove', () => {
    assert.deepEqual(addFinalizerOps({ metadata: { finalizers: [POOL_FINALIZER] } }), []);
    assert.deepEqual(removeFinalizerOps({ metadata: { finalizers: ['other'] } }), []);
  });
  test('removing the last finalizer removes the list', () => {
    assert.deepEqual(removeFinalizerOps({ metadata: { finalizers: [POOL_FINALIZER] } }), [{ op: 'test', path: '/metadata/finalizers', value: [POOL_FINALIZER] }, { op: 'remove', path: '/metadata/finalizers' }]);
  });
  test('release drops only the pool reference and finalizer, as valid JSON (upstream breaks with another finalizer, Q-P4)', () => {
    // arrange
    const vm = { metadata: { finalizers: ['kubevirt.io/virtualMachineControllerFinalize', POOL_FINALIZER], ownerReferences: [{ uid: 'pool-uid' }, { uid: 'other' }] } };
    // act
    const ops = releaseOps(vm, 'pool-uid');
    // assert
    assert.deepEqual(ops.filter((o) => o.op !== 'test'), [
      { op: 'replace', path: '/metadata/ownerReferences', value: [{ uid: 'other' }] },
      { op: 'replace', path: '/metadata/finalizers', value: ['kubevirt.io/virtualMachineControllerFinalize'] },
    ]);
    assert.deepEqual(removeOwnerOps({ metadata: { ownerReferences: [{ uid: 'x' }] } }, 'y'), []);
  });
});
