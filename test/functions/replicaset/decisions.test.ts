import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../../shared/api/index.ts';
import { decideClean, decideScale } from '../../../functions/replicaset/scale.ts';
import { planStatus } from '../../../functions/replicaset/status.ts';
import { replicaSetMapper } from '../../../functions/replicaset/wakes.ts';
import type { WatchedObject } from '../../../shared/relay/route.ts';

const NOW = '2026-03-01T12:00:00.000Z';
const vmi = (name: string, ready = false): VirtualMachineInstance => ({
  metadata: { name, namespace: 'ns' },
  spec: { domain: { devices: {} } },
  status: ready ? { conditions: [{ type: 'Ready', status: 'True' }] } : {},
});
const vmis = (n: number, ready = 0) => Array.from({ length: n }, (_, i) => vmi(`v${i}`, i < ready));

describe('scale decision', () => {
  const cases: { name: string; active: number; replicas: number; burst: number; want: string }[] = [
    { name: 'equal: nothing', active: 3, replicas: 3, burst: 250, want: 'none' },
    { name: 'too few: create the difference', active: 1, replicas: 4, burst: 250, want: 'create 3' },
    { name: 'too few: at most the burst', active: 0, replicas: 500, burst: 250, want: 'create 250' },
    { name: 'too many: the first ones in list order', active: 4, replicas: 1, burst: 250, want: 'delete v0,v1,v2' },
    { name: 'too many: at most the burst', active: 5, replicas: 0, burst: 2, want: 'delete v0,v1' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const active = vmis(c.active);
      // act
      const d = decideScale(active, c.replicas, c.burst);
      // assert
      const got = d.kind === 'none' ? 'none' : d.kind === 'create' ? `create ${d.count}` : `delete ${d.vmis.map((v) => v.metadata?.name).join(',')}`;
      assert.equal(got, c.want);
    });
  }

  test('clean: the first BurstReplicas of the finished ones', () => {
    // arrange
    const finished = vmis(5);
    // act
    const got = decideClean(finished, 3);
    // assert
    assert.deepEqual(got.map((v) => v.metadata?.name), ['v0', 'v1', 'v2']);
  });
});

describe('status plan (§1.3)', () => {
  const rs = (spec: Partial<VirtualMachineInstanceReplicaSet['spec']>, status?: VirtualMachineInstanceReplicaSet['status']): VirtualMachineInstanceReplicaSet => ({
    metadata: { name: 'rs', namespace: 'ns' },
    spec: { replicas: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } }, ...spec },
    ...(status ? { status } : {}),
  });
  const synced = { replicas: 2, readyReplicas: 1, labelSelector: 'a=b', conditions: [] };
  const failure = { type: 'ReplicaFailure', status: 'True', reason: 'FailedDelete', message: 'old', lastTransitionTime: '2026-01-01T00:00:00Z' };
  const cases: {
    name: string;
    rs: VirtualMachineInstanceReplicaSet;
    active: VirtualMachineInstance[];
    error?: string;
    want: { write: false } | { write: true; conditions: string[]; event?: string; replicas?: number };
  }[] = [
    { name: 'nothing differs: no write', rs: rs({}, synced), active: vmis(2, 1), want: { write: false } },
    { name: 'counts differ: write', rs: rs({}, synced), active: vmis(3, 1), want: { write: true, conditions: [], replicas: 3 } },
    { name: 'selector string missing: write', rs: rs({}, { ...synced, labelSelector: '' }), active: vmis(2, 1), want: { write: true, conditions: [] } },
    { name: 'paused: ReplicaPaused added, SuccessfulPaused', rs: rs({ paused: true }, synced), active: vmis(2, 1), want: { write: true, conditions: ['ReplicaPaused/Paused'], event: 'SuccessfulPaused' } },
    {
      name: 'resumed: ReplicaPaused removed, SuccessfulResumed',
      rs: rs({}, { ...synced, conditions: [{ type: 'ReplicaPaused', status: 'True', reason: 'Paused' }] }),
      active: vmis(2, 1),
      want: { write: true, conditions: [], event: 'SuccessfulResumed' },
    },
    { name: 'scale error with too few: FailedCreate', rs: rs({ replicas: 5 }, synced), active: vmis(2, 1), error: 'boom', want: { write: true, conditions: ['ReplicaFailure/FailedCreate/boom'] } },
    { name: 'scale error with too many: FailedDelete (Q-R5)', rs: rs({ replicas: 1 }, synced), active: vmis(2, 1), error: 'boom', want: { write: true, conditions: ['ReplicaFailure/FailedDelete/boom'] } },
    { name: 'existing failure is not refreshed and no write when nothing else differs', rs: rs({ replicas: 5 }, { ...synced, conditions: [failure] }), active: vmis(2, 1), error: 'new', want: { write: false } },
    { name: 'existing failure, counts differ: kept as it was', rs: rs({ replicas: 5 }, { ...synced, conditions: [failure] }), active: vmis(3, 1), error: 'new', want: { write: true, conditions: ['ReplicaFailure/FailedDelete/old'], replicas: 3 } },
    { name: 'no error: failure removed', rs: rs({}, { ...synced, conditions: [failure] }), active: vmis(2, 1), want: { write: true, conditions: [] } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange: the case
      // act
      const plan = planStatus(c.rs, c.active, c.error, NOW);
      // assert
      if (!c.want.write) {
        assert.equal(plan, undefined);
        return;
      }
      assert.ok(plan);
      const conds = (plan.status.conditions ?? []).map((x) => [x.type, x.reason, x.type === 'ReplicaFailure' ? x.message : undefined].filter(Boolean).join('/'));
      assert.deepEqual(conds, c.want.conditions);
      assert.equal('conditions' in plan.status, c.want.conditions.length > 0, "KubeVirt's omitempty: no conditions is no field, not []");
      assert.equal(plan.pausedEvent?.reason, c.want.event);
      if (c.want.replicas !== undefined) assert.equal(plan.status.replicas, c.want.replicas);
      assert.equal(plan.status.labelSelector, 'a=b');
    });
  }
});

describe('relay mapping (§1.1)', () => {
  const rsObj = (name: string, selector: Record<string, string>): WatchedObject => ({ metadata: { name, namespace: 'ns', uid: `u-${name}` }, spec: { selector: { matchLabels: selector } } });
  const vmiObj = (labels: Record<string, string>, owner?: string): WatchedObject => ({
    metadata: {
      name: 'v',
      namespace: 'ns',
      labels,
      ...(owner ? { ownerReferences: [{ kind: owner.split('/')[0], name: owner.split('/')[1], uid: 'x', controller: true }] } : {}),
    },
  });
  const cases: { name: string; type: 'ADDED' | 'MODIFIED' | 'DELETED'; obj: WatchedObject; old?: WatchedObject; keys: string[] }[] = [
    { name: 'owned VMI → its replica set', type: 'MODIFIED', obj: vmiObj({ app: 'x' }, 'VirtualMachineInstanceReplicaSet/b'), old: vmiObj({ app: 'x' }, 'VirtualMachineInstanceReplicaSet/b'), keys: ['ns/b'] },
    { name: 'owned VMI deleted → its replica set', type: 'DELETED', obj: vmiObj({ app: 'x' }, 'VirtualMachineInstanceReplicaSet/b'), keys: ['ns/b'] },
    { name: 'orphan added → every matching replica set', type: 'ADDED', obj: vmiObj({ app: 'x' }), keys: ['ns/a', 'ns/c'] },
    { name: 'orphan updated, labels unchanged → nobody', type: 'MODIFIED', obj: vmiObj({ app: 'x' }), old: vmiObj({ app: 'x' }), keys: [] },
    { name: 'orphan relabelled → the matching ones', type: 'MODIFIED', obj: vmiObj({ app: 'y' }), old: vmiObj({ app: 'x' }), keys: ['ns/b', 'ns/c'] },
    { name: 'released → the old owner and the matching ones', type: 'MODIFIED', obj: vmiObj({ app: 'x' }), old: vmiObj({ app: 'x' }, 'VirtualMachineInstanceReplicaSet/b'), keys: ['ns/b', 'ns/a', 'ns/c'] },
    { name: 'orphan deleted → nobody', type: 'DELETED', obj: vmiObj({ app: 'x' }), keys: [] },
    { name: 'controlled by a VM → nobody', type: 'ADDED', obj: vmiObj({ app: 'x' }, 'VirtualMachine/vm'), keys: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const map = replicaSetMapper();
      map('VirtualMachineInstanceReplicaSet', 'ADDED', rsObj('a', { app: 'x' }));
      map('VirtualMachineInstanceReplicaSet', 'ADDED', rsObj('b', { app: 'y' }));
      map('VirtualMachineInstanceReplicaSet', 'ADDED', rsObj('c', {}));
      map('VirtualMachineInstanceReplicaSet', 'ADDED', { ...rsObj('elsewhere', { app: 'x' }), metadata: { name: 'elsewhere', namespace: 'other' } });
      // act
      const got = map('VirtualMachineInstance', c.type, c.obj, c.old);
      // assert
      assert.deepEqual(got.map((t) => t.key), c.keys);
      assert.ok(got.every((t) => t.controller === 'replicaset'));
    });
  }

  test('a replica set event names itself; once deleted it no longer matches orphans', () => {
    // arrange
    const map = replicaSetMapper();
    map('VirtualMachineInstanceReplicaSet', 'ADDED', rsObj('a', { app: 'x' }));
    // act
    const own = map('VirtualMachineInstanceReplicaSet', 'DELETED', rsObj('a', { app: 'x' }));
    const orphan = map('VirtualMachineInstance', 'ADDED', vmiObj({ app: 'x' }));
    // assert
    assert.deepEqual(own, [{ controller: 'replicaset', key: 'ns/a' }]);
    assert.deepEqual(orphan, []);
  });
});
