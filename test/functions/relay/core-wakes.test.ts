/**
 * What wakes the VMI, VM and migration controllers (functions/vmi/wakes.ts, functions/vm/wakes.ts,
 * functions/migration/wakes.ts), table-driven: every watched kind, through the three mappers the
 * relay runs side by side, with their indexes built by the events that came before (as the
 * relay's reflectors would deliver them).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migrationWakes } from '../../../functions/migration/wakes.ts';
import { vmWakes } from '../../../functions/vm/wakes.ts';
import { vmiWakes } from '../../../functions/vmi/wakes.ts';
import type { EventMapper, EventType, KeyTarget, WatchedKind, WatchedObject } from '../../../shared/relay/route.ts';

/** The three mappers as the relay runs them: each event through each, their keys together. */
function coreWakes(): EventMapper {
  const mappers = [vmiWakes, vmWakes, migrationWakes].map((w) => w.mapper({ now: Date.now }));
  return (kind, type, obj, old) => mappers.flatMap((m) => m(kind, type, obj, old));
}

function mapEvent(kind: WatchedKind, type: EventType, obj: WatchedObject, mappers: EventMapper, old?: WatchedObject): KeyTarget[] {
  return mappers(kind, type, obj, old);
}

type Ev = readonly [WatchedKind, EventType, WatchedObject, WatchedObject?];

const ref = (kind: string, name: string, uid = `${name}-uid`) => ({ kind, name, uid, controller: true });

function vmi(name: string, extra: { owner?: string; claims?: string[]; dvs?: string[]; ns?: string } = {}): WatchedObject {
  const volumes = [...(extra.claims ?? []).map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })), ...(extra.dvs ?? []).map((d) => ({ name: d, dataVolume: { name: d } }))];
  return {
    metadata: { name, namespace: extra.ns ?? 'ns', uid: `${name}-uid`, resourceVersion: '10', ...(extra.owner ? { ownerReferences: [ref('VirtualMachine', extra.owner)] } : {}) },
    spec: { volumes },
  };
}

function vm(name: string, extra: { claims?: string[]; dvTemplates?: string[] } = {}): WatchedObject {
  return {
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, resourceVersion: '11' },
    spec: {
      template: { spec: { volumes: (extra.claims ?? []).map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })) } },
      dataVolumeTemplates: (extra.dvTemplates ?? []).map((d) => ({ metadata: { name: d } })),
    },
  };
}

function migration(name: string, vmiName: string, phase = 'Running', conditions?: { type: string }[], ns = 'ns'): WatchedObject {
  return { metadata: { name, namespace: ns, uid: `${name}-uid`, resourceVersion: '12' }, spec: { vmiName }, status: { phase, ...(conditions ? { conditions } : {}) } };
}
const REJECTED = [{ type: 'migrationRejectedByResourceQuota' }];
const quota = (ns = 'ns'): WatchedObject => ({ metadata: { name: 'q', namespace: ns, uid: 'q-uid', resourceVersion: '16' }, spec: { hard: { 'limits.memory': '1Gi' } } });

function pod(name: string, meta: Partial<NonNullable<WatchedObject['metadata']>> = {}): WatchedObject {
  return { metadata: { name, namespace: 'ns', uid: `${name}-uid`, resourceVersion: '13', labels: { 'kubevirt.io': 'virt-launcher' }, ...meta } };
}

const claim = (name: string): WatchedObject => ({ metadata: { name, namespace: 'ns', uid: `${name}-uid`, resourceVersion: '14' } });
const kubevirt = (annotations: Record<string, string> = {}): WatchedObject => ({ metadata: { name: 'kubevirt', namespace: 'kubevirt', uid: 'kv-uid', resourceVersion: '15', annotations } });

interface Case {
  readonly name: string;
  readonly before?: readonly Ev[];
  readonly event: Ev;
  /** `controller key`, in any order. */
  readonly want: readonly string[];
}

const CASES: readonly Case[] = [
  { name: 'standalone VMI (no VM of its name) → its own key only', event: ['VirtualMachineInstance', 'ADDED', vmi('a')], want: ['vmi ns/a'] },
  {
    name: 'orphan VMI with a VM of the same name → also that VM (it may adopt it)',
    before: [['VirtualMachine', 'ADDED', vm('a')]],
    event: ['VirtualMachineInstance', 'ADDED', vmi('a')],
    want: ['vmi ns/a', 'vm ns/a'],
  },
  { name: 'VMI with a VM controller ref → the VM named by it', event: ['VirtualMachineInstance', 'MODIFIED', vmi('a-x1', { owner: 'a' })], want: ['vmi ns/a-x1', 'vm ns/a'] },
  {
    name: 'VMI with migrations → also every migration of it',
    before: [
      ['VirtualMachineInstanceMigration', 'ADDED', migration('m1', 'a')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('m2', 'a', 'Succeeded')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('m3', 'other')],
    ],
    event: ['VirtualMachineInstance', 'MODIFIED', vmi('a')],
    want: ['vmi ns/a', 'migration ns/m1', 'migration ns/m2'],
  },
  { name: 'VMI deleted → still its keys (the functions clean up)', event: ['VirtualMachineInstance', 'DELETED', vmi('a', { owner: 'a' })], want: ['vmi ns/a', 'vm ns/a'] },
  { name: 'launcher pod → its VMI by controller ref', event: ['Pod', 'ADDED', pod('virt-launcher-a-xyz', { ownerReferences: [ref('VirtualMachineInstance', 'a')] })], want: ['vmi ns/a'] },
  {
    name: 'attachment pod (controller ref kind Pod) → the launcher pod’s VMI',
    before: [['Pod', 'ADDED', pod('launcher', { ownerReferences: [ref('VirtualMachineInstance', 'a')] })]],
    event: ['Pod', 'ADDED', pod('hp-volume-1', { ownerReferences: [{ kind: 'Pod', name: 'launcher', uid: 'launcher-uid', controller: true }] })],
    want: ['vmi ns/a'],
  },
  { name: 'attachment pod whose launcher was never seen → nothing', event: ['Pod', 'ADDED', pod('hp-volume-2', { ownerReferences: [{ kind: 'Pod', name: 'x', uid: 'unknown', controller: true }] })], want: [] },
  { name: 'orphan pod → the VMI its owner annotation names', event: ['Pod', 'MODIFIED', pod('virt-launcher-b', { annotations: { 'kubevirt.io/owner-vmi-name': 'b' } })], want: ['vmi ns/b'] },
  { name: 'pod owned by something else → nothing', event: ['Pod', 'ADDED', pod('p', { ownerReferences: [ref('ReplicaSet', 'rs')] })], want: [] },
  {
    name: 'target pod with kubevirt.io/migrationJobUID → the migration (and its VMI)',
    before: [['VirtualMachineInstanceMigration', 'ADDED', migration('mig', 'a')]],
    event: ['Pod', 'ADDED', pod('virt-launcher-a-target', { ownerReferences: [ref('VirtualMachineInstance', 'a')], labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/migrationJobUID': 'mig-uid' } })],
    want: ['vmi ns/a', 'migration ns/mig'],
  },
  {
    name: 'launcher pod of a migrating VMI without the label → the VMI’s migrations',
    before: [['VirtualMachineInstanceMigration', 'ADDED', migration('mig', 'a')]],
    event: ['Pod', 'MODIFIED', pod('virt-launcher-a', { ownerReferences: [ref('VirtualMachineInstance', 'a')] })],
    want: ['vmi ns/a', 'migration ns/mig'],
  },
  {
    name: 'pod whose controller ref changed → new and old VMI',
    event: ['Pod', 'MODIFIED', pod('p', { ownerReferences: [ref('VirtualMachineInstance', 'new')] }), pod('p', { ownerReferences: [ref('VirtualMachineInstance', 'old')] })],
    want: ['vmi ns/new', 'vmi ns/old'],
  },
  {
    name: 'PVC → every VMI and VM using it',
    before: [
      ['VirtualMachineInstance', 'ADDED', vmi('a', { claims: ['disk'] })],
      ['VirtualMachineInstance', 'ADDED', vmi('b', { claims: ['disk', 'other'] })],
      ['VirtualMachineInstance', 'ADDED', vmi('c', { claims: ['other'] })],
      ['VirtualMachineInstance', 'ADDED', vmi('d', { claims: ['disk'], ns: 'elsewhere' })],
      ['VirtualMachine', 'ADDED', vm('v', { claims: ['disk'] })],
    ],
    event: ['PersistentVolumeClaim', 'MODIFIED', claim('disk')],
    want: ['vmi ns/a', 'vmi ns/b', 'vm ns/v'],
  },
  {
    name: 'DataVolume → VMIs with a dataVolume volume and VMs with the template',
    before: [
      ['VirtualMachineInstance', 'ADDED', vmi('a', { dvs: ['dv'] })],
      ['VirtualMachine', 'ADDED', vm('v', { dvTemplates: ['dv'] })],
    ],
    event: ['DataVolume', 'MODIFIED', claim('dv')],
    want: ['vmi ns/a', 'vm ns/v'],
  },
  {
    name: 'PVC of a DataVolume (same name) → the VMIs using the DataVolume',
    before: [['VirtualMachineInstance', 'ADDED', vmi('a', { dvs: ['dv'] })]],
    event: ['PersistentVolumeClaim', 'ADDED', claim('dv')],
    want: ['vmi ns/a'],
  },
  {
    name: 'PVC after its VMI was deleted → nothing',
    before: [
      ['VirtualMachineInstance', 'ADDED', vmi('a', { claims: ['disk'] })],
      ['VirtualMachineInstance', 'DELETED', vmi('a', { claims: ['disk'] })],
    ],
    event: ['PersistentVolumeClaim', 'MODIFIED', claim('disk')],
    want: [],
  },
  { name: 'PVC nobody uses → nothing', event: ['PersistentVolumeClaim', 'ADDED', claim('free')], want: [] },
  {
    name: 'a backend-storage PVC → the VMI its persistent-state-for label names',
    event: ['PersistentVolumeClaim', 'ADDED', { metadata: { name: 'persistent-state-for-a-x1', namespace: 'ns', labels: { 'persistent-state-for': 'a' } } }],
    want: ['vmi ns/a'],
  },
  { name: 'VM → its key', event: ['VirtualMachine', 'MODIFIED', vm('v')], want: ['vm ns/v'] },
  { name: 'migration → its key and its VMI', event: ['VirtualMachineInstanceMigration', 'ADDED', migration('m', 'a')], want: ['migration ns/m', 'vmi ns/a'] },
  {
    name: 'KubeVirt CR change → every unfinished migration, no VMI',
    before: [
      ['VirtualMachineInstance', 'ADDED', vmi('a')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('run', 'a')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('done', 'a', 'Succeeded')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('gone', 'a')],
      ['VirtualMachineInstanceMigration', 'DELETED', migration('gone', 'a')],
    ],
    event: ['KubeVirt', 'MODIFIED', kubevirt(), kubevirt()],
    want: ['migration ns/run'],
  },
  {
    name: 'KubeVirt skip-backup-hooks annotation changed → also every VMI',
    before: [
      ['VirtualMachineInstance', 'ADDED', vmi('a')],
      ['VirtualMachineInstance', 'ADDED', vmi('b')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('run', 'a')],
    ],
    event: ['KubeVirt', 'MODIFIED', kubevirt({ 'kubevirt.io/skip-backup-hooks': 'true' }), kubevirt()],
    want: ['migration ns/run', 'vmi ns/a', 'vmi ns/b'],
  },
  {
    name: 'KubeVirt annotation changed while the watch was down (seen on relist) → also every VMI',
    before: [['VirtualMachineInstance', 'ADDED', vmi('a')]],
    event: ['KubeVirt', 'RELIST', kubevirt({ 'kubevirt.io/skip-backup-hooks': 'true' }), kubevirt()],
    want: ['vmi ns/a'],
  },
  {
    name: 'KubeVirt first listed (nothing known before) → no VMI storm',
    before: [['VirtualMachineInstance', 'ADDED', vmi('a')]],
    event: ['KubeVirt', 'RELIST', kubevirt({ 'kubevirt.io/skip-backup-hooks': 'true' })],
    want: [],
  },
  {
    name: 'ResourceQuota changed → the namespace\'s migrations its quota refused, no other (KubeVirt\'s updateResourceQuota)',
    before: [
      ['VirtualMachineInstanceMigration', 'ADDED', migration('refused', 'a', 'Pending', REJECTED)],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('waiting', 'b', 'Pending')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('elsewhere', 'c', 'Pending', REJECTED, 'other')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('cleared', 'd', 'Pending', REJECTED)],
      ['VirtualMachineInstanceMigration', 'MODIFIED', migration('cleared', 'd', 'Scheduling')],
      ['VirtualMachineInstanceMigration', 'ADDED', migration('gone', 'e', 'Pending', REJECTED)],
      ['VirtualMachineInstanceMigration', 'DELETED', migration('gone', 'e', 'Pending', REJECTED)],
    ],
    event: ['ResourceQuota', 'MODIFIED', quota()],
    want: ['migration ns/refused'],
  },
  {
    name: 'ResourceQuota deleted → the migrations it refused',
    before: [['VirtualMachineInstanceMigration', 'ADDED', migration('refused', 'a', 'Pending', REJECTED)]],
    event: ['ResourceQuota', 'DELETED', quota()],
    want: ['migration ns/refused'],
  },
  {
    name: 'ResourceQuota added → nothing (KubeVirt handles updates and deletions only)',
    before: [['VirtualMachineInstanceMigration', 'ADDED', migration('refused', 'a', 'Pending', REJECTED)]],
    event: ['ResourceQuota', 'ADDED', quota()],
    want: [],
  },
  {
    name: 'KubeVirt other annotation changed → migrations only',
    before: [['VirtualMachineInstance', 'ADDED', vmi('a')]],
    event: ['KubeVirt', 'MODIFIED', kubevirt({ unrelated: 'x' }), kubevirt()],
    want: [],
  },
];

describe('mapEvent', () => {
  for (const c of CASES) {
    test(c.name, () => {
      // arrange
      const idx = coreWakes();
      for (const [kind, type, obj, old] of c.before ?? []) mapEvent(kind, type, obj, idx, old);
      // act
      const [kind, type, obj, old] = c.event;
      const got = mapEvent(kind, type, obj, idx, old).map((t) => `${t.controller} ${t.key}`);
      // assert
      assert.deepEqual([...got].sort(), [...c.want].sort(), `${kind} ${type} ${obj.metadata?.name} mapped to ${JSON.stringify(got)}`);
    });
  }

  test('a deleted launcher pod is forgotten: its attachment pods no longer map', () => {
    // arrange
    const idx = coreWakes();
    const launcher = pod('launcher', { ownerReferences: [ref('VirtualMachineInstance', 'a')] });
    mapEvent('Pod', 'ADDED', launcher, idx);
    mapEvent('Pod', 'DELETED', launcher, idx);
    // act
    const got = mapEvent('Pod', 'ADDED', pod('hp', { ownerReferences: [{ kind: 'Pod', name: 'launcher', uid: 'launcher-uid', controller: true }] }), idx);
    // assert
    assert.deepEqual(got, [], 'the pod-owner index kept a deleted pod');
  });

  test('a migration that finishes leaves the active set', () => {
    // arrange
    const idx = coreWakes();
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', migration('m', 'a'), idx);
    // act
    mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', migration('m', 'a', 'Failed'), idx);
    // assert
    const woken = mapEvent('KubeVirt', 'MODIFIED', kubevirt(), idx, kubevirt()).filter((t) => t.controller === 'migration');
    assert.deepEqual(woken, [], 'a failed migration is still re-enqueued on config changes');
  });

  test('an object without metadata maps without throwing', () => {
    // arrange
    const idx = coreWakes();
    // act
    const got = (['VirtualMachineInstance', 'Pod', 'PersistentVolumeClaim', 'KubeVirt'] as const).flatMap((k) => mapEvent(k, 'ADDED', {}, idx));
    // assert
    assert.ok(Array.isArray(got));
  });
});

describe('waking the migrations that wait for a slot', () => {
  const FINALIZER = 'kubevirt.io/migrationJobFinalize';
  const mig = (name: string, vmiName: string, phase: string, opts: { finalizer?: boolean; priority?: string; sourceNode?: string } = {}): WatchedObject => ({
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, resourceVersion: '20', ...(opts.finalizer ? { finalizers: [FINALIZER] } as object : {}) },
    spec: { vmiName, ...(opts.priority ? { priority: opts.priority } : {}) },
    status: { phase, ...(opts.sourceNode ? { migrationState: { sourceNode: opts.sourceNode } } : {}) },
  });
  const onNode = (name: string, node: string): WatchedObject => ({ metadata: { name, namespace: 'ns', uid: `${name}-uid`, resourceVersion: '21' }, status: { nodeName: node } });
  const keys = (targets: readonly { controller: string; key: string }[]) => targets.filter((t) => t.controller === 'migration').map((t) => t.key).sort();

  /** `run` holds a slot leaving n1; w1, w2 (n1) and x1 (n2) wait, all system-critical. */
  function drain(): EventMapper {
    const idx = coreWakes();
    for (const [v, n] of [['vr', 'n1'], ['v1', 'n1'], ['v2', 'n1'], ['vx', 'n2']] as const) mapEvent('VirtualMachineInstance', 'ADDED', onNode(v, n), idx);
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('run', 'vr', 'Running', { finalizer: true, priority: 'system-critical', sourceNode: 'n1' }), idx);
    for (const [m, v] of [['w1', 'v1'], ['w2', 'v2'], ['x1', 'vx']] as const) mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig(m, v, 'Pending', { finalizer: true, priority: 'system-critical' }), idx);
    return idx;
  }

  test('final with the finalizer still on (its slot not yet given back) wakes nobody', () => {
    // arrange
    const idx = drain();
    // act
    const got = mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run', 'vr', 'Succeeded', { finalizer: true, sourceNode: 'n1' }), idx);
    // assert
    assert.deepEqual(keys(got), ['ns/run']);
  });

  test('the finalizer gone after the final phase: the first waiting of its node and the first of another node', () => {
    // arrange
    const idx = drain();
    mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run', 'vr', 'Succeeded', { finalizer: true, sourceNode: 'n1' }), idx);
    // act
    const got = mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run', 'vr', 'Succeeded', { sourceNode: 'n1' }), idx);
    // assert
    assert.deepEqual(keys(got), ['ns/run', 'ns/w1', 'ns/x1']);
  });

  test('two slots freed before the woken one starts wake two different waiting migrations', () => {
    // arrange
    const idx = drain();
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('run2', 'vr', 'Running', { finalizer: true, sourceNode: 'n1' }), idx);
    mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run', 'vr', 'Succeeded', { sourceNode: 'n1' }), idx);
    // act
    const got = mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run2', 'vr', 'Failed', { sourceNode: 'n1' }), idx);
    // assert
    assert.ok(keys(got).includes('ns/w2'), `the second freed slot woke ${JSON.stringify(keys(got))}`);
    assert.ok(!keys(got).includes('ns/w1'), 'w1 was woken by the first and is at the back of the order');
  });

  test('higher priority first: a system-critical migration is woken before an older user-triggered one', () => {
    // arrange
    const idx = coreWakes();
    for (const v of ['vr', 'va', 'vb']) mapEvent('VirtualMachineInstance', 'ADDED', onNode(v, 'n1'), idx);
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('run', 'vr', 'Running', { finalizer: true, sourceNode: 'n1' }), idx);
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('user', 'va', 'Pending', { priority: 'user-triggered' }), idx);
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('critical', 'vb', '', { priority: 'system-critical' }), idx);
    // act
    const got = mapEvent('VirtualMachineInstanceMigration', 'DELETED', mig('run', 'vr', 'Running', { finalizer: true, sourceNode: 'n1' }), idx);
    // assert
    assert.deepEqual(keys(got), ['ns/critical', 'ns/run']);
  });

  test('a migration already seen released wakes nobody again: its relist, its deletion (GC)', () => {
    // arrange
    const idx = drain();
    mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run', 'vr', 'Succeeded', { sourceNode: 'n1' }), idx);
    // act
    const relist = mapEvent('VirtualMachineInstanceMigration', 'RELIST', mig('run', 'vr', 'Succeeded', { sourceNode: 'n1' }), idx);
    const deleted = mapEvent('VirtualMachineInstanceMigration', 'DELETED', mig('run', 'vr', 'Succeeded', { sourceNode: 'n1' }), idx);
    // assert
    assert.deepEqual([keys(relist), keys(deleted)], [['ns/run'], ['ns/run']]);
  });

  test('a released migration first seen by the relay (its first list) wakes: a wake may have been missed', () => {
    // arrange
    const idx = drain();
    // act
    const got = mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('old', 'vr', 'Failed', { sourceNode: 'n2' }), idx);
    // assert
    assert.deepEqual(keys(got), ['ns/old', 'ns/w1', 'ns/x1']);
  });

  test('a waiting migration that started (Scheduling) or is being deleted is no longer woken', () => {
    // arrange
    const idx = drain();
    mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('w1', 'v1', 'Scheduling', { finalizer: true }), idx);
    mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', { ...mig('w2', 'v2', 'Pending', { finalizer: true }), metadata: { ...mig('w2', 'v2', 'Pending', { finalizer: true }).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, idx);
    // act
    const got = mapEvent('VirtualMachineInstanceMigration', 'MODIFIED', mig('run', 'vr', 'Succeeded', { sourceNode: 'n1' }), idx);
    // assert
    assert.deepEqual(keys(got), ['ns/run', 'ns/x1']);
    mapEvent('VirtualMachineInstanceMigration', 'ADDED', mig('run2', 'vr', 'Running', { finalizer: true, sourceNode: 'n1' }), idx);
    const next = mapEvent('VirtualMachineInstanceMigration', 'DELETED', mig('run2', 'vr', 'Running', { sourceNode: 'n1' }), idx);
    assert.deepEqual(keys(next), ['ns/run2', 'ns/x1'], 'w1 and w2 left the waiting order');
  });
});
