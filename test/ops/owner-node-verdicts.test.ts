/**
 * The diagnose verdicts beyond the seed's three symptoms (issue 18), pure and table-driven: a
 * replica set or pool short of replicas, a node drain that does not progress, and a snapshot that
 * does not become ready.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { diagnosis, problem } from '../../ops/diagnose/finding.ts';
import { diagnoseNode, type NodeEvidence, type NodeView, type NodeVmiView } from '../../ops/diagnose/node-verdicts.ts';
import { diagnoseSnapshot, type SnapshotEvidence, type SnapshotView } from '../../ops/diagnose/snapshot-verdicts.ts';
import { diagnoseReplicas, POOL_KIND, REPLICA_SET_KIND, type ReplicasEvidence } from '../../ops/diagnose/replicas-verdicts.ts';
import type { TraceEntry } from '../../shared/state/traces.ts';
import { NOW, trace } from './fixtures.ts';

/** A replica set reconcile of `default/rs`. */
const rsTrace = (over: Partial<TraceEntry> = {}): TraceEntry => trace({ controller: 'replicaset', key: 'default/rs', cause: { kind: 'VirtualMachineInstanceReplicaSet', namespace: 'default', name: 'rs', resourceVersion: '10', event: 'MODIFIED', seenAt: NOW - 60_000 }, ...over });

const owner = { name: 'rs', resourceVersion: '10', desired: 3, paused: false, deleting: false, conditions: [] };
const ready = (name: string) => ({ name, ready: true, state: 'Running', deleting: false });
const unready = (name: string, state = 'Scheduling') => ({ name, ready: false, state, deleting: false });
const stuckVmi = diagnosis('vmi/default/rs-c', [problem('claim-pending', 'no launcher pod: PVC default/data is Pending (StorageClass slow, WaitForFirstConsumer)', ['the class binds on first consumer'])], '');
const startingVmi = diagnosis('vmi/default/rs-c', [], 'vmi default/rs-c is Scheduling');

function rsEvidence(over: Partial<ReplicasEvidence>): ReplicasEvidence {
  return { now: NOW, key: 'default/rs', owner, replicas: [], deadLetters: [], traces: [rsTrace()], expectations: [], events: [], ...over };
}

describe('replica set and pool verdicts', () => {
  const cases: { name: string; kind?: typeof REPLICA_SET_KIND; e: ReplicasEvidence; first: string; healthy?: boolean }[] = [
    { name: 'all ready', e: rsEvidence({ replicas: [ready('rs-a'), ready('rs-b'), ready('rs-c')] }), first: 'healthy: replica set default/rs has 3 of 3 replicas ready', healthy: true },
    { name: 'gone', e: rsEvidence({ owner: undefined }), first: 'not found: VirtualMachineInstanceReplicaSet default/rs does not exist' },
    {
      name: 'paused while short',
      e: rsEvidence({ owner: { ...owner, paused: true }, replicas: [ready('rs-a')] }),
      first: 'replica set short of replicas (1 of 3 ready): replica set default/rs is paused (spec.paused): the controller creates and deletes no VMIs',
    },
    {
      name: 'creates fail: the ReplicaFailure condition',
      e: rsEvidence({ owner: { ...owner, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'admission webhook denied: quota exceeded' }] }, replicas: [ready('rs-a')] }),
      first: 'replica set short of replicas (1 of 3 ready): VMI writes fail: FailedCreate: admission webhook denied: quota exceeded',
    },
    {
      name: 'creates fail: only a FailedCreate event',
      e: rsEvidence({ replicas: [ready('rs-a')], events: [{ type: 'Warning', reason: 'FailedCreate', message: 'Error creating VMI: forbidden', count: 4, lastAt: NOW - 5000 }] }),
      first: 'replica set short of replicas (1 of 3 ready): VMI writes fail: FailedCreate: Error creating VMI: forbidden',
    },
    {
      name: 'waiting on its create expectation',
      e: rsEvidence({ replicas: [ready('rs-a')], expectations: [{ name: 'rs-vmis', record: { add: 2, del: 0, deleteKeys: [], setAt: NOW - 40_000 } }] }),
      first: 'replica set short of replicas (1 of 3 ready): waiting on 2 creates not yet seen (expectation rs-vmis set 40 s ago); it expires in 4 min 20 s',
    },
    {
      name: 'an expired expectation is no wait',
      e: rsEvidence({ replicas: [ready('rs-a'), ready('rs-b'), unready('rs-c')], expectations: [{ name: 'rs-vmis', record: { add: 1, del: 0, deleteKeys: [], setAt: NOW - 400_000 } }], firstUnready: startingVmi }),
      first: 'healthy: replica set default/rs has 2 of 3 replicas ready',
      healthy: true,
    },
    {
      name: "the first unready VMI's own cause",
      e: rsEvidence({ replicas: [ready('rs-a'), ready('rs-b'), unready('rs-c', 'Pending')], firstUnready: stuckVmi }),
      first: 'replica set short of replicas (2 of 3 ready): VMI rs-c: no launcher pod: PVC default/data is Pending (StorageClass slow, WaitForFirstConsumer)',
    },
    {
      name: 'too few VMIs and reconciles failing',
      e: rsEvidence({ replicas: [ready('rs-a')], traces: [rsTrace({ outcome: { kind: 'retry', reason: 'Forbidden', message: 'cannot create virtualmachineinstances' } })] }),
      first: 'replica set short of replicas (1 of 3 ready): 1 VMI exists; reconciles keep failing: Forbidden: cannot create virtualmachineinstances',
    },
    {
      name: 'too few VMIs and never reconciled',
      e: rsEvidence({ replicas: [], traces: [] }),
      first: 'replica set short of replicas (0 of 3 ready): 0 VMIs exist; no reconcile of it is recorded (is the relay running?)',
    },
    {
      name: 'dead-lettered',
      e: rsEvidence({ replicas: [], deadLetters: [{ controller: 'replicaset', key: 'default/rs', reason: 'InternalError', message: 'boom', attempts: 5, firstFailureAt: NOW - 90_000, lastFailureAt: NOW - 30_000, body: '' } as never] }),
      first: 'replica set short of replicas (0 of 3 ready): the key replicaset default/rs is dead-lettered (InternalError, 5 attempts, 30 s ago)',
    },
    {
      name: 'a pool names its VMs',
      kind: POOL_KIND,
      e: rsEvidence({ owner: { ...owner, desired: 2 }, replicas: [ready('p-0'), unready('p-1', 'ErrorUnschedulable')], firstUnready: diagnosis('vm/default/p-1', [problem('pod-unschedulable', 'launcher pod default/virt-launcher-p-1-x is unschedulable: 0/3 nodes are available')], '') }),
      first: 'pool short of replicas (1 of 2 ready): VM p-1: launcher pod default/virt-launcher-p-1-x is unschedulable: 0/3 nodes are available',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange (the evidence above)
      // act
      const d = diagnoseReplicas(c.kind ?? REPLICA_SET_KIND, c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
    });
  }
});

const node: NodeView = { name: 'node01', cordoned: false, drainTaint: false, ready: 'True', schedulableLabel: 'true', heartbeatAt: NOW - 20_000, liveness: 'responsive' };
const cordoned: NodeView = { ...node, cordoned: true };
const vmiOn = (name: string, over: Partial<NodeVmiView> = {}): NodeVmiView => ({ key: `default/${name}`, phase: 'Running', evictionStrategy: 'LiveMigrate', migratesOnEviction: true, marked: true, ...over });

function nodeEvidence(over: Partial<NodeEvidence>): NodeEvidence {
  return { now: NOW, name: 'node01', node, vmis: [], deadLetters: [], evacuationTraces: [], cluster: { limit: 5, holders: [] }, outbound: { limit: 2, holders: [] }, ...over };
}

describe('node and drain verdicts', () => {
  const targetStuck = diagnosis('migration/default/kubevirt-evacuation-abc', [problem('target-unschedulable', 'target pod unschedulable: 0/3 nodes are available: 2 Insufficient devices.kubevirt.io/kvm.; the unschedulable timeout fires in 4 min')], '');
  const limited = diagnosis('migration/default/kubevirt-evacuation-def', [problem('node-limit', "migration Pending: node node01's outbound limit is full (2 of 2) — held by default/a, default/b")], '');
  const cases: { name: string; e: NodeEvidence; first: string; healthy?: boolean }[] = [
    { name: 'a quiet node', e: nodeEvidence({ vmis: [vmiOn('a', { marked: false })] }), first: 'healthy: node node01 is Ready, 1 VMI, virt-handler heartbeat 20 s ago', healthy: true },
    { name: 'gone, with VMIs naming it', e: nodeEvidence({ node: undefined, vmis: [vmiOn('a')] }), first: 'node node01 does not exist but 1 VMI still name it: the node controller fails them (NodeUnresponsive)' },
    { name: 'gone', e: nodeEvidence({ node: undefined }), first: 'not found: Node node01 does not exist' },
    { name: 'virt-handler stopped', e: nodeEvidence({ node: { ...node, heartbeatAt: NOW - 360_000, liveness: 'unresponsive', schedulableLabel: 'false' } }), first: 'virt-handler on node01 is not responding: its heartbeat is 6 min old (timeout 5 min)' },
    { name: 'drained', e: nodeEvidence({ node: cordoned }), first: 'healthy: node node01 is drained: no VMIs left on it', healthy: true },
    {
      name: 'a drain in progress, throttled by the limits',
      e: nodeEvidence({ node: cordoned, vmis: [vmiOn('a', { migration: { name: 'kubevirt-evacuation-def', phase: 'Pending', evacuation: true, diagnosis: limited } })], outbound: { limit: 2, holders: ['default/x', 'default/y'] } }),
      first: 'healthy: drain of node01 in progress: 1 VMI left, 1 migrating',
      healthy: true,
    },
    {
      name: 'a VMI that cannot live-migrate blocks the drain',
      e: nodeEvidence({ node: cordoned, vmis: [vmiOn('a', { notMigratable: { reason: 'DisksNotLiveMigratable', message: 'cannot migrate VMI: PVC data is not shared' } })] }),
      first: 'drain of node01 is not progressing: VMI default/a cannot live-migrate (DisksNotLiveMigratable: cannot migrate VMI: PVC data is not shared) but its eviction strategy is LiveMigrate: its launcher pod\'s eviction is refused',
    },
    {
      name: "a stuck evacuation migration: its own cause",
      e: nodeEvidence({ node: cordoned, vmis: [vmiOn('a', { migration: { name: 'kubevirt-evacuation-abc', phase: 'Scheduling', evacuation: true, diagnosis: targetStuck } })] }),
      first: 'drain of node01 is not progressing: migration kubevirt-evacuation-abc of VMI default/a: target pod unschedulable: 0/3 nodes are available: 2 Insufficient devices.kubevirt.io/kvm.; the unschedulable timeout fires in 4 min',
    },
    {
      name: 'marked VMIs and no migration',
      e: nodeEvidence({ node: cordoned, vmis: [vmiOn('a'), vmiOn('b')], evacuationTraces: [rsTrace({ controller: 'evacuation', key: 'node01', outcome: { kind: 'retry', reason: 'Forbidden', message: 'cannot create migrations' } })] }),
      first: "drain of node01 is not progressing: 2 VMIs are marked for evacuation with no migration (default/a, default/b); the evacuation controller's last reconcile ended retry (Forbidden: cannot create migrations)",
    },
    {
      name: 'VMIs the drain stops are only a note',
      e: nodeEvidence({ node: cordoned, vmis: [vmiOn('a', { evictionStrategy: 'None', migratesOnEviction: false, marked: false })] }),
      first: 'healthy: drain of node01 in progress: 1 VMI left, 0 migrating',
      healthy: true,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange (the evidence above)
      // act
      const d = diagnoseNode(c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
    });
  }
});

describe('snapshot verdicts', () => {
  const snap: SnapshotView = { name: 's', resourceVersion: '7', phase: 'InProgress', readyToUse: false, sourceKind: 'VirtualMachine', sourceName: 'vm', createdAt: NOW - 120_000, deadlineMs: 300_000, conditions: [], contentName: 'vmsnapshot-content-u' };
  const ev = (over: Partial<SnapshotEvidence>): SnapshotEvidence => ({ now: NOW, key: 'default/s', snapshot: snap, sourceExists: true, deadLetters: [], traces: [], ...over });
  const cases: { name: string; e: SnapshotEvidence; first: string; healthy?: boolean }[] = [
    { name: 'ready', e: ev({ snapshot: { ...snap, phase: 'Succeeded', readyToUse: true } }), first: 'healthy: snapshot default/s is Succeeded, ready to use (content vmsnapshot-content-u)', healthy: true },
    { name: 'gone', e: ev({ snapshot: undefined }), first: 'not found: VirtualMachineSnapshot default/s does not exist' },
    { name: 'Failed at its deadline', e: ev({ snapshot: { ...snap, phase: 'Failed', conditions: [{ type: 'Failure', status: 'True', reason: 'Snapshot deadline exceeded' }] } }), first: 'snapshot Failed: Snapshot deadline exceeded' },
    { name: 'the source VM is missing', e: ev({ sourceExists: false }), first: 'snapshot not ready: its source VirtualMachine default/vm does not exist' },
    { name: 'an error on the content', e: ev({ content: { error: 'VolumeSnapshotClass sandbox-csi-snapclass not found', unready: [] } }), first: 'snapshot not ready: VolumeSnapshotClass sandbox-csi-snapclass not found (failure deadline in 3 min)' },
    { name: 'the source lock not taken', e: ev({ snapshot: { ...snap, conditions: [{ type: 'Progressing', status: 'False', reason: 'Source not locked', message: 'source default/vm is not stopped' }] } }), first: 'snapshot not ready: Source not locked: source default/vm is not stopped (failure deadline in 3 min)' },
    { name: 'VolumeSnapshots not ready after a minute', e: ev({ content: { unready: [{ name: 'vmsnapshot-u-volume-disk' }] } }), first: 'snapshot not ready: 1 VolumeSnapshot is not ready to use (vmsnapshot-u-volume-disk) (failure deadline in 3 min)' },
    { name: 'VolumeSnapshots not ready yet, just started: a note', e: ev({ snapshot: { ...snap, createdAt: NOW - 5000 }, content: { unready: [{ name: 'v' }] } }), first: 'healthy: snapshot default/s is InProgress for 5 s (failure deadline in 4 min 55 s) (content vmsnapshot-content-u)', healthy: true },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const d = diagnoseSnapshot(c.e);
      // assert
      assert.equal(d.verdict, c.first);
      assert.equal(d.healthy, c.healthy ?? false);
    });
  }
});
