/**
 * Pure decisions of the migration controller, table-driven: phase transitions (reference §d.3),
 * the limit decision and priority retry intervals (§d.4), pending-pod timeouts, policy matching
 * (§d.6), backoff and garbage collection (§d.7).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { MigrationPolicy, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { FAILURE, nextPhase, type PhaseInput } from '../../../functions/migration/phases.ts';
import { decideLimits, fenceLimits, retrySecondsForPriority, runningMigrations, type RunningMigration } from '../../../functions/migration/limits.ts';
import { pendingPodTimeout } from '../../../functions/migration/timeouts.ts';
import { matchPolicy, resolveMigrationConfiguration } from '../../../functions/migration/policies.ts';
import { backoffSeconds, EVACUATION_ANNOTATION } from '../../../functions/migration/backoff.ts';
import { collectGarbage } from '../../../functions/migration/gc.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';

const UID = 'mig-uid';
const T0 = Date.parse('2026-03-01T12:00:00Z');

function migration(phase: string, extra: Partial<NonNullable<VirtualMachineInstanceMigration['metadata']>> = {}): VirtualMachineInstanceMigration {
  return { metadata: { name: 'm', namespace: 'default', uid: UID, ...extra }, spec: { vmiName: 'v' }, status: { phase } };
}
function vmi(phase: string, migrationState?: NonNullable<VirtualMachineInstance['status']>['migrationState']): VirtualMachineInstance {
  return { metadata: { name: 'v', namespace: 'default', uid: 'vmi-uid' }, spec: { domain: { devices: {} } }, status: { phase, nodeName: 'node01', ...(migrationState ? { migrationState } : {}) } };
}
const running: V1Pod = { metadata: { name: 't' }, status: { phase: 'Running', containerStatuses: [{ name: 'compute', ready: true, restartCount: 0, image: 'x', imageID: 'x', state: { running: {} } }] } };
const pending: V1Pod = { metadata: { name: 't' }, status: { phase: 'Pending' } };
const down: V1Pod = { metadata: { name: 't' }, status: { phase: 'Failed' } };
const ours = (more: object = {}) => ({ migrationUid: UID, targetNode: 'node02', targetPod: 't', ...more });

describe('phase transitions', () => {
  const cases: { name: string; input: Omit<PhaseInput, 'otherMigrationActive'> & { otherMigrationActive?: boolean }; phase: string; steps?: string[]; failure?: string }[] = [
    { name: 'new → Pending', input: { migration: migration(''), vmi: vmi('Running'), targetPod: undefined }, phase: 'Pending', steps: ['Pending'] },
    { name: 'new while another migration owns the VMI → Failed', input: { migration: migration(''), vmi: vmi('Running'), targetPod: undefined, otherMigrationActive: true }, phase: 'Failed', failure: FAILURE.notEligible },
    { name: 'Pending + target pod → Scheduling', input: { migration: migration('Pending'), vmi: vmi('Running'), targetPod: pending }, phase: 'Scheduling', steps: ['Scheduling'] },
    { name: 'Pending + ready target → Scheduling → Scheduled', input: { migration: migration('Pending'), vmi: vmi('Running'), targetPod: running }, phase: 'Scheduled', steps: ['Scheduling', 'Scheduled'] },
    { name: 'Scheduled, handed off → PreparingTarget', input: { migration: migration('Scheduled'), vmi: vmi('Running', ours()), targetPod: running }, phase: 'PreparingTarget' },
    { name: 'target address → TargetReady', input: { migration: migration('PreparingTarget'), vmi: vmi('Running', ours({ targetNodeAddress: '10.0.0.2' })), targetPod: running }, phase: 'TargetReady' },
    { name: 'started → Running', input: { migration: migration('TargetReady'), vmi: vmi('Running', ours({ targetNodeAddress: 'a', startTimestamp: 't' })), targetPod: running }, phase: 'Running' },
    { name: 'completed → Succeeded', input: { migration: migration('Running'), vmi: vmi('Running', ours({ targetNodeAddress: 'a', startTimestamp: 't', completed: true })), targetPod: running }, phase: 'Succeeded' },
    { name: 'completed but a hotplug change pending → stays Running', input: { migration: migration('Running'), vmi: { ...vmi('Running', ours({ targetNodeAddress: 'a', startTimestamp: 't', completed: true })), status: { ...vmi('Running', ours({ targetNodeAddress: 'a', startTimestamp: 't', completed: true })).status, conditions: [{ type: 'HotVCPUChange', status: 'True' }] } }, targetPod: running }, phase: 'Running' },
    { name: 'VMI missing → Failed', input: { migration: migration('Pending'), vmi: undefined, targetPod: undefined }, phase: 'Failed', failure: FAILURE.vmiMissing },
    { name: 'VMI final, not handed off → Failed', input: { migration: migration('Pending'), vmi: vmi('Succeeded'), targetPod: undefined }, phase: 'Failed', failure: FAILURE.vmiShutdown },
    { name: 'deleted before hand-off → Failed (canceled)', input: { migration: migration('Scheduling', { deletionTimestamp: 't' }), vmi: vmi('Running'), targetPod: pending }, phase: 'Failed', failure: FAILURE.canceled },
    { name: 'target pod ended → Failed', input: { migration: migration('Scheduling'), vmi: vmi('Running'), targetPod: down }, phase: 'Failed', failure: FAILURE.targetPodDown },
    { name: 'target pod removed → Failed', input: { migration: migration('Scheduling'), vmi: vmi('Running'), targetPod: undefined }, phase: 'Failed', failure: FAILURE.targetPodRemoved },
    { name: 'VMI state cleared after hand-off → Failed', input: { migration: migration('TargetReady'), vmi: vmi('Running'), targetPod: running }, phase: 'Failed', failure: FAILURE.stateCleared },
    { name: 'VMI state of another migration → Failed', input: { migration: migration('Running'), vmi: vmi('Running', { migrationUid: 'other' }), targetPod: running }, phase: 'Failed', failure: FAILURE.otherMigration },
    { name: 'source reported failure → Failed', input: { migration: migration('Running'), vmi: vmi('Running', ours({ failed: true, completed: true, failureReason: 'boom' })), targetPod: running }, phase: 'Failed', failure: `${FAILURE.sourceReported}: boom` },
    { name: 'final stays final', input: { migration: migration('Succeeded'), vmi: undefined, targetPod: undefined }, phase: 'Succeeded', steps: [] },
    // A VMI with hotplugged volumes: its target attachment pod gates Scheduling and Scheduled.
    { name: 'hotplug: ready target, no attachment pod → stays Pending', input: { migration: migration('Pending'), vmi: vmi('Running'), targetPod: running, hotplug: true }, phase: 'Pending', steps: [] },
    { name: 'hotplug: attachment pod not ready yet → stays Pending', input: { migration: migration('Pending'), vmi: vmi('Running'), targetPod: running, hotplug: true, attachmentPod: pending }, phase: 'Pending', steps: [] },
    { name: 'hotplug: attachment pod ready → Scheduling → Scheduled', input: { migration: migration('Pending'), vmi: vmi('Running'), targetPod: running, hotplug: true, attachmentPod: { ...running, status: { phase: 'Running', containerStatuses: [{ name: 'hotplug-disk', ready: true, restartCount: 0, image: 'x', imageID: 'x' }] } } }, phase: 'Scheduled', steps: ['Scheduling', 'Scheduled'] },
    { name: 'hotplug: attachment pod ended → Failed', input: { migration: migration('Scheduled'), vmi: vmi('Running'), targetPod: running, hotplug: true, attachmentPod: down }, phase: 'Failed', failure: FAILURE.attachmentPodDown },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const r = nextPhase({ otherMigrationActive: false, ...c.input });
      // assert
      assert.equal(r.phase, c.phase, 'phase');
      if (c.steps) assert.deepEqual(r.steps, c.steps, 'steps recorded');
      if (c.failure) assert.equal(r.failure, c.failure, 'KubeVirt failure message');
    });
  }
  test('deleted after hand-off: not failed, abort requested', () => {
    const r = nextPhase({ migration: migration('Running', { deletionTimestamp: 't' }), vmi: vmi('Running', ours({ targetNodeAddress: 'a', startTimestamp: 't' })), targetPod: running, otherMigrationActive: false });
    assert.equal(r.phase, 'Running');
    assert.equal(r.abortRequested, true);
  });
});

describe('limit decision', () => {
  const limits = { cluster: 5, perNode: 2 };
  const cases: { name: string; cluster: string[]; node: string[]; want: 'cluster' | 'node' | undefined }[] = [
    { name: 'room everywhere', cluster: ['a'], node: [], want: undefined },
    { name: 'cluster full', cluster: ['a', 'b', 'c', 'd', 'e'], node: [], want: 'cluster' },
    { name: 'node full', cluster: ['a', 'b'], node: ['a', 'b'], want: 'node' },
    { name: 'already a holder of both: keeps its slot', cluster: ['a', 'b', 'c', 'd', 'me'], node: ['a', 'me'], want: undefined },
    { name: 'holder of the cluster slot, node full', cluster: ['me', 'a', 'b'], node: ['a', 'b'], want: 'node' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(decideLimits('me', c.cluster, c.node, limits), c.want));
  const running = (key: string, sourceNode?: string): RunningMigration => ({ key, sourceNode });
  const fences: { name: string; cluster: string[]; node: string[]; api: RunningMigration[]; want: 'cluster' | 'node' | undefined }[] = [
    { name: 'fence: leases and API agree, room', cluster: ['me', 'a'], node: ['me'], api: [running('a', 'n2')], want: undefined },
    { name: 'fence: a lapsed lease still running fills the cluster', cluster: ['me', 'a', 'b', 'c', 'd'], node: ['me'], api: [running('a', 'n2'), running('x', 'n3')], want: 'cluster' },
    { name: 'fence: a lapsed lease still running fills the node', cluster: ['me', 'a'], node: ['me', 'a'], api: [running('x', 'n1')], want: 'node' },
    { name: 'fence: running elsewhere does not fill the node', cluster: ['me', 'a'], node: ['me', 'a'], api: [running('x', 'n2')], want: undefined },
    { name: 'fence: a running migration of unknown source counts on every node', cluster: ['me', 'a'], node: ['me', 'a'], api: [running('x')], want: 'node' },
    { name: 'fence: a lease holder also running counts once', cluster: ['me', 'a', 'b', 'c'], node: ['me'], api: [running('a', 'n2'), running('b', 'n2'), running('c', 'n3')], want: undefined },
    { name: 'fence: the holder itself shown running does not count', cluster: ['me', 'a', 'b', 'c', 'd'], node: ['me'], api: [running('me', 'n1')], want: undefined },
  ];
  for (const c of fences) test(c.name, () => assert.equal(fenceLimits('me', 'n1', { cluster: c.cluster, node: c.node }, c.api, limits), c.want));
  test('running as KubeVirt counts it: Scheduling on and not final, or Pending/new with a target pod', () => {
    // arrange
    const m = (name: string, phase: string, sourceNode?: string): VirtualMachineInstanceMigration => ({
      metadata: { name, namespace: 'default', uid: `uid-${name}` },
      spec: { vmiName: name },
      status: { phase, ...(sourceNode ? { migrationState: { sourceNode } } : {}) },
    });
    const all = [m('new', ''), m('pending', 'Pending', 'n1'), m('pending-pod', 'Pending', 'n1'), m('new-pod', ''), m('scheduling', 'Scheduling', 'n2'), m('running', 'Running', 'n1'), m('done', 'Succeeded', 'n1'), m('failed-pod', 'Failed', 'n1')];
    // act
    const got = runningMigrations(all, new Set(['uid-pending-pod', 'uid-new-pod', 'uid-failed-pod']));
    // assert
    assert.deepEqual(got, [running('default/pending-pod', 'n1'), running('default/new-pod'), running('default/scheduling', 'n2'), running('default/running', 'n1')]);
  });
  test('retry interval by priority (KubeVirt: 1 s / 3 s / 5 s)', () => {
    assert.deepEqual(['system-critical', 'user-triggered', 'system-maintenance', undefined].map(retrySecondsForPriority), [1, 3, 5, 5]);
  });
});

describe('pending target pod timeouts', () => {
  const pod = (conditions: NonNullable<V1Pod['status']>['conditions'], phase = 'Pending'): V1Pod => ({ metadata: { name: 't', namespace: 'default', creationTimestamp: new Date(T0) }, status: { phase, ...(conditions ? { conditions } : {}) } });
  const unsched = [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes' }];
  const cases: { name: string; p: V1Pod; ageS: number; annotations?: Record<string, string>; kind: string; seconds?: number }[] = [
    { name: 'unschedulable, 299 s', p: pod(unsched), ageS: 299, kind: 'wait', seconds: 1 },
    { name: 'unschedulable, 300 s → delete', p: pod(unsched), ageS: 300, kind: 'delete' },
    { name: 'unschedulable, annotation 10 s → delete at 10 s', p: pod(unsched), ageS: 10, annotations: { 'kubevirt.io/migrationUnschedulablePodTimeoutSeconds': '10' }, kind: 'delete' },
    { name: 'pending without a reason, 899 s', p: pod(undefined), ageS: 899, kind: 'wait', seconds: 1 },
    { name: 'pending without a reason, 900 s → delete', p: pod(undefined), ageS: 900, kind: 'delete' },
    { name: 'running pod: no timeout', p: pod(undefined, 'Running'), ageS: 5000, kind: 'none' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const m: VirtualMachineInstanceMigration = { metadata: { name: 'm', ...(c.annotations ? { annotations: c.annotations } : {}) }, spec: {} };
      const d = pendingPodTimeout(c.p, m, T0 + c.ageS * 1000);
      assert.equal(d.kind, c.kind);
      if (c.seconds !== undefined && d.kind === 'wait') assert.equal(d.seconds, c.seconds);
    });
  }
});

describe('migration policies', () => {
  const policy = (name: string, vmiSel?: Record<string, string>, nsSel?: Record<string, string>, spec: Partial<MigrationPolicy['spec']> = {}): MigrationPolicy => ({
    metadata: { name },
    spec: { selectors: { ...(vmiSel ? { virtualMachineInstanceSelector: vmiSel } : {}), ...(nsSel ? { namespaceSelector: nsSel } : {}) }, ...spec },
  });
  const v = (labels?: Record<string, string>): VirtualMachineInstance => ({ metadata: { name: 'v', ...(labels ? { labels } : {}) }, spec: { domain: { devices: {} } } });
  const cases: { name: string; policies: MigrationPolicy[]; vmi: VirtualMachineInstance; ns: Record<string, string>; want: string | undefined }[] = [
    { name: 'no match', policies: [policy('a', { app: 'x' })], vmi: v({ app: 'y' }), ns: {}, want: undefined },
    { name: 'more matched labels wins', policies: [policy('a', { app: 'x' }), policy('b', { app: 'x', tier: 'db' })], vmi: v({ app: 'x', tier: 'db' }), ns: {}, want: 'b' },
    { name: 'tie: more VMI labels wins', policies: [policy('a', undefined, { team: 't', env: 'p' }), policy('b', { app: 'x', tier: 'db' })], vmi: v({ app: 'x', tier: 'db' }), ns: { team: 't', env: 'p' }, want: 'b' },
    { name: 'full tie: smallest name', policies: [policy('zz', { app: 'x' }), policy('aa', { app: 'x' })], vmi: v({ app: 'x' }), ns: {}, want: 'aa' },
    { name: 'namespace selector must match', policies: [policy('a', { app: 'x' }, { team: 't' })], vmi: v({ app: 'x' }), ns: { team: 'u' }, want: undefined },
    { name: 'quirk: VMI without labels skips the namespace selector', policies: [policy('a', undefined, { team: 't' })], vmi: v(), ns: {}, want: 'a' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(matchPolicy(c.policies, c.vmi, c.ns)?.metadata?.name, c.want));
  test('the winner overrides the cluster settings; allowWorkloadDisruption follows allowPostCopy', () => {
    const settings = clusterConfigFromKubeVirt().migrations;
    const r = resolveMigrationConfiguration(settings, policy('p', { a: 'b' }, undefined, { allowPostCopy: true, bandwidthPerMigration: '64Mi', completionTimeoutPerGiB: 10 }));
    assert.equal(r.allowPostCopy, true);
    assert.equal(r.allowWorkloadDisruption, true);
    assert.equal(r.bandwidthPerMigration, '64Mi');
    assert.equal(r.completionTimeoutPerGiB, 10);
    assert.equal(r.maxDowntimeMs, 900, 'unset policy fields keep the cluster value');
    assert.equal(r.parallelMigrationsPerCluster, 5);
  });
  test("as KubeVirt serialises the defaults: the bandwidth canonical (0Mi → 0), disableTLS and matchSELinuxLevelOnMigration absent unless the CR sets them", () => {
    // arrange
    const defaults = clusterConfigFromKubeVirt().migrations;
    const set = clusterConfigFromKubeVirt({ spec: { configuration: { migrations: { disableTLS: false, matchSELinuxLevelOnMigration: true, bandwidthPerMigration: '1024Mi' } } } } as never).migrations;
    // act
    const r = resolveMigrationConfiguration(defaults, undefined);
    const s = resolveMigrationConfiguration(set, undefined);
    // assert
    assert.equal(r.bandwidthPerMigration, '0');
    assert.deepEqual(['disableTLS' in r, 'matchSELinuxLevelOnMigration' in r], [false, false]);
    assert.deepEqual([s.disableTLS, s.matchSELinuxLevelOnMigration, s.bandwidthPerMigration], [false, true, '1Gi']);
  });
});

describe('backoff and garbage collection', () => {
  const m = (name: string, createdS: number, phase: string, opts: { evac?: boolean; failedAtS?: number; failed?: boolean } = {}): VirtualMachineInstanceMigration => ({
    metadata: { name, uid: name, creationTimestamp: new Date(T0 + createdS * 1000).toISOString(), ...(opts.evac ? { annotations: { [EVACUATION_ANNOTATION]: 'node01' } } : {}) },
    spec: { vmiName: 'v' },
    status: {
      phase,
      ...(opts.failedAtS !== undefined ? { phaseTransitionTimestamps: [{ phase: 'Failed', phaseTransitionTimestamp: new Date(T0 + opts.failedAtS * 1000).toISOString() }] } : {}),
      ...(phase === 'Failed' || phase === 'Succeeded' ? { migrationState: { failed: phase === 'Failed', completed: true, targetPod: `${name}-target`, sourcePod: `${name}-source` } } : {}),
    },
  });
  test('no backoff without an evacuation/workload-update annotation', () => {
    assert.equal(backoffSeconds(m('new', 100, ''), [m('old', 0, 'Failed', { evac: true, failedAtS: 90 })], T0 + 100_000), 0);
  });
  test('one failure: 20 s from its end; two: 40 s; a success in between resets', () => {
    const now = T0 + 100_000;
    assert.equal(backoffSeconds(m('new', 100, '', { evac: true }), [m('f1', 0, 'Failed', { evac: true, failedAtS: 95 })], now), 15);
    assert.equal(backoffSeconds(m('new', 100, '', { evac: true }), [m('f1', 0, 'Failed', { evac: true, failedAtS: 80 }), m('f2', 10, 'Failed', { evac: true, failedAtS: 95 })], now), 35);
    assert.equal(backoffSeconds(m('new', 100, '', { evac: true }), [m('f1', 0, 'Failed', { evac: true, failedAtS: 80 }), m('s', 10, 'Succeeded', { evac: true })], now), 0);
  });
  test('GC keeps the newest 5 finished, deletes the rest with the pod each left behind', () => {
    const all = [m('a', 0, 'Failed'), m('b', 1, 'Succeeded'), m('c', 2, 'Succeeded'), m('d', 3, 'Succeeded'), m('e', 4, 'Succeeded'), m('f', 5, 'Succeeded'), m('g', 6, 'Succeeded'), m('live', 7, 'Running')];
    assert.deepEqual(collectGarbage(all).map((x) => [x.migration.metadata?.name, x.pod]), [['a', 'a-target'], ['b', 'b-source']]);
    assert.deepEqual(collectGarbage(all.slice(2)), [], 'five or fewer finished: nothing to collect');
  });
});
