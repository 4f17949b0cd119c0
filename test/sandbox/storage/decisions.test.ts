/**
 * The storage agents' decisions as tables: what the CSI snapshotter reports, when a claim is
 * provisioned, what CDI does with a DataVolume, how virt-handler's backup progresses, what the
 * stop subresource asks of a VM, what the guest agent answers, which Secrets block a pod.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nextSnapshotStep } from '../../../sandbox/storage/snapshot-status.ts';
import { decideClaim, renderPv } from '../../../sandbox/storage/provisioning.ts';
import { nextDvStep } from '../../../sandbox/storage/data-volume-status.ts';
import { nextBackupStep, utilityVolumeStatus } from '../../../sandbox/storage/backup-steps.ts';
import { stopAction } from '../../../sandbox/virt-api/vm-stop.ts';
import { goDurationMs } from '../../../sandbox/virt-api/server.ts';
import { freezeAnswer, unfreezeAnswer } from '../../../sandbox/nodes/guest-agent.ts';
import { volumeProblems } from '../../../sandbox/nodes/pod-volumes.ts';
import { exportDeadlineOf } from '../../../sandbox/storage/export-server.ts';
import type { Pvc, StorageClass, VolumeSnapshot } from '../../../sandbox/storage/objects.ts';

const NOW = '2026-12-01T10:00:00Z';
const bound: Pvc = { metadata: { name: 'disk', namespace: 'default' }, spec: { resources: { requests: { storage: '2Gi' } } }, status: { phase: 'Bound', capacity: { storage: '2Gi' } } };
const vs = (status: VolumeSnapshot['status'] = {}, cls = 'snapclass'): VolumeSnapshot => ({ metadata: { name: 'vs', namespace: 'default', uid: 'u1' }, spec: { source: { persistentVolumeClaimName: 'disk' }, volumeSnapshotClassName: cls }, status });

describe('CSI snapshotter: next status of a VolumeSnapshot', () => {
  const cases: { name: string; vs: VolumeSnapshot; pvc?: Pvc; classFound?: boolean; failure?: string; want: string | undefined; check?: (s: Record<string, unknown>) => void }[] = [
    { name: 'waits for a bound claim', vs: vs(), pvc: { ...bound, status: { phase: 'Pending' } }, want: undefined },
    { name: 'cuts the snapshot: creationTime, restoreSize = claim size, not ready yet', vs: vs(), pvc: bound, want: 'create', check: (s) => assert.deepEqual([s.creationTime, s.restoreSize, s.readyToUse, s.boundVolumeSnapshotContentName], [NOW, '2Gi', false, 'snapcontent-u1']) },
    { name: 'then ready', vs: vs({ creationTime: NOW, readyToUse: false }), pvc: bound, want: 'ready', check: (s) => assert.equal(s.readyToUse, true) },
    { name: 'ready snapshots are left alone', vs: vs({ creationTime: NOW, readyToUse: true }), pvc: bound, want: undefined },
    { name: 'an injected failure is status.error', vs: vs(), pvc: bound, failure: 'driver broke', want: 'error', check: (s) => assert.deepEqual(s.error, { message: 'driver broke', time: NOW }) },
    { name: 'the same failure is not written twice', vs: vs({ readyToUse: false, error: { message: 'driver broke', time: NOW } }), pvc: bound, failure: 'driver broke', want: undefined },
    { name: 'a missing class is an error', vs: vs(), pvc: bound, classFound: false, want: 'error', check: (s) => assert.match(String((s.error as { message: string }).message), /volumesnapshotclass.*"snapclass" not found/) },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const step = nextSnapshotStep(c.vs, { pvc: c.pvc, classFound: c.classFound ?? true, failure: c.failure, nowIso: NOW });
      assert.equal(step?.step, c.want);
      if (step && c.check) c.check(step.status);
    });
  }
});

describe('provisioner: when a claim gets a volume', () => {
  const sc = (name: string, mode: string, extra: Partial<StorageClass> = {}): StorageClass => ({ metadata: { name }, provisioner: 'csi.test', volumeBindingMode: mode, ...extra });
  const classes = [sc('fast', 'Immediate', { metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } }), sc('late', 'WaitForFirstConsumer')];
  const claim = (spec: Pvc['spec']): Pvc => ({ metadata: { name: 'c', namespace: 'default', uid: 'cu' }, spec: { resources: { requests: { storage: '1Gi' } }, ...spec }, status: { phase: 'Pending' } });
  const readyVs = vs({ readyToUse: true, restoreSize: '5Gi', creationTime: NOW });
  const cases: { name: string; pvc: Pvc; node?: string; snapshot?: VolumeSnapshot; want: RegExp | { size: string; node?: string } }[] = [
    { name: 'Immediate: provisioned at once', pvc: claim({ storageClassName: 'fast' }), want: { size: '1Gi' } },
    { name: 'no class named: the default class', pvc: claim({}), want: { size: '1Gi' } },
    { name: 'a missing class waits, saying so', pvc: claim({ storageClassName: 'gone' }), want: /"gone" not found/ },
    { name: 'WFFC waits for a consumer', pvc: claim({ storageClassName: 'late' }), want: /first consumer/ },
    { name: 'WFFC provisions on the consumer node', pvc: claim({ storageClassName: 'late' }), node: 'node02', want: { size: '1Gi', node: 'node02' } },
    { name: 'a restore waits for its snapshot', pvc: claim({ storageClassName: 'fast', dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'vs' } }), want: /VolumeSnapshot vs/ },
    { name: 'a restore gets at least restoreSize', pvc: claim({ storageClassName: 'fast', dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'vs' } }), snapshot: readyVs, want: { size: '5Gi' } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const d = decideClaim(c.pvc, { classes, consumerNode: c.node, snapshot: c.snapshot });
      assert.ok(d);
      if (c.want instanceof RegExp) {
        assert.ok('wait' in d, 'the claim waits');
        assert.match(d.wait, c.want);
      } else {
        assert.ok('provision' in d, `provisioned, not: ${JSON.stringify(d)}`);
        const pv = renderPv(c.pvc, d);
        assert.equal(pv.spec?.capacity?.storage, c.want.size);
        assert.equal(pv.spec?.claimRef?.uid, 'cu');
        assert.equal(pv.metadata?.name, 'pvc-cu');
        assert.equal(JSON.stringify(pv.spec?.nodeAffinity ?? null).includes(c.want.node ?? '§'), c.want.node !== undefined);
      }
    });
  }
  test('a bound claim needs nothing', () => assert.equal(decideClaim(bound, { classes, consumerNode: undefined, snapshot: undefined }), undefined));
});

describe('CDI: next step for a DataVolume', () => {
  const dv = (ann: Record<string, string> = {}) => ({ metadata: { name: 'dv', namespace: 'default', uid: 'dvu', annotations: ann }, spec: { pvc: { resources: { requests: { storage: '1Gi' } } } } });
  const owned = (phase: string, ann: Record<string, string> = {}): Pvc => ({ metadata: { name: 'dv', annotations: ann, ownerReferences: [{ kind: 'DataVolume', name: 'dv', uid: 'dvu', controller: true }] }, status: { phase } });
  const cases: { name: string; dv: ReturnType<typeof dv>; pvc?: Pvc; want: unknown }[] = [
    { name: 'no claim: create it', dv: dv(), want: { act: 'create-claim' } },
    { name: 'claim pending: Pending', dv: dv(), pvc: owned('Pending'), want: { act: 'status', phase: 'Pending', progress: 'N/A', populate: false } },
    { name: 'claim bound: populate, then Succeeded', dv: dv(), pvc: owned('Bound'), want: { act: 'status', phase: 'Succeeded', progress: '100.0%', populate: true } },
    { name: 'pre-populated, claim left by a restore: adopt it', dv: dv({ 'cdi.kubevirt.io/storage.prePopulated': 'dv' }), pvc: { metadata: { name: 'dv', annotations: { 'cdi.kubevirt.io/storage.populatedFor': 'dv' } }, status: { phase: 'Bound' } }, want: { act: 'adopt-claim' } },
    { name: 'pre-populated and adopted: Succeeded without import', dv: dv({ 'cdi.kubevirt.io/storage.prePopulated': 'dv' }), pvc: owned('Bound', { 'cdi.kubevirt.io/storage.populatedFor': 'dv' }), want: { act: 'status', phase: 'Succeeded', progress: '100.0%', populate: false } },
    { name: 'pre-populated, no claim yet: Pending, nothing created', dv: dv({ 'cdi.kubevirt.io/storage.prePopulated': 'dv' }), want: { act: 'status', phase: 'Pending', progress: 'N/A', populate: false } },
    { name: "someone else's claim is left alone", dv: dv(), pvc: { metadata: { name: 'dv', ownerReferences: [{ kind: 'VirtualMachine', name: 'vm', uid: 'other', controller: true }] } }, want: undefined },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(nextDvStep(c.dv, c.pvc, []), c.want));
});

describe('virt-handler backup steps', () => {
  const vmi = (status: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
    metadata: { name: 'vm', namespace: 'default' },
    spec: { volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: 'disk' } }, { name: 'cloudinit', cloudInitNoCloud: {} }], ...spec },
    status: { phase: 'Running', conditions: [{ type: 'AgentConnected', status: 'True' }], ...status },
  });
  const run = (extra: Partial<{ abort: boolean; failure: string; mode: string; exportServerAddr: string }> = {}) => ({
    request: { backupName: 'b1', cmd: 'Start', ...(extra.mode ? { mode: extra.mode } : {}), ...(extra.exportServerAddr ? { exportServerAddr: extra.exportServerAddr } : {}) },
    abort: extra.abort ?? false,
    failure: extra.failure,
  });
  const bs = (extra: Record<string, unknown> = {}) => ({ changedBlockTracking: { state: 'Enabled', backupStatus: { backupName: 'b1', startTimestamp: NOW, ...extra } } });
  test('nothing before the controller wrote backupStatus (it does so after Start)', () => assert.equal(nextBackupStep(vmi({}), run(), NOW), undefined));
  test('progress: the PVC volumes, the checkpoint, quiesced', () =>
    assert.deepEqual(nextBackupStep(vmi(bs()), run(), NOW), { step: 'progress', delay: true, fields: { volumes: [{ volumeName: 'rootdisk' }], checkpointName: 'b1', quiesceStatus: 'Succeeded' } }));
  test('then completed', () => assert.deepEqual(nextBackupStep(vmi(bs({ volumes: [] })), run(), NOW)?.fields, { completed: true, endTimestamp: NOW }));
  test('abort ends it failed', () => assert.deepEqual(nextBackupStep(vmi(bs()), run({ abort: true }), NOW)?.fields, { completed: true, failed: true, backupMsg: 'backup was aborted', endTimestamp: NOW }));
  test('an injected failure ends it failed with the message', () => assert.equal(nextBackupStep(vmi(bs()), run({ failure: 'disk gone' }), NOW)?.fields.backupMsg, 'disk gone'));
  test('pull mode waits for the Export command', () => {
    assert.equal(nextBackupStep(vmi(bs({ volumes: [] })), run({ mode: 'Pull' }), NOW), undefined);
    assert.equal(nextBackupStep(vmi(bs({ volumes: [] })), run({ mode: 'Pull', exportServerAddr: 'svc.ns.svc' }), NOW)?.step, 'complete');
  });
  test('utility volumes attach and detach; real hotplug volumes stay', () => {
    const attached = utilityVolumeStatus(vmi({}, { utilityVolumes: [{ name: 'b1-backup-target-pvc', claimName: 't' }] }) as never);
    assert.deepEqual(attached?.map((s) => [s.name, s.phase, s.hotplugVolume !== undefined]), [['b1-backup-target-pvc', 'MountedToPod', true]]);
    const hot = { name: 'rootdisk', phase: 'Ready', hotplugVolume: {} };
    const detached = utilityVolumeStatus(vmi({ volumeStatus: [hot, { name: 'b1-backup-target-pvc', hotplugVolume: {} }] }) as never);
    assert.deepEqual(detached, [hot]);
    assert.equal(utilityVolumeStatus(vmi({ volumeStatus: [hot] }) as never), undefined, 'nothing to change');
  });
});

describe('virt-api stop: what it asks of the VM', () => {
  const vm = (spec: Record<string, unknown>) => ({ metadata: { name: 'vm' }, spec });
  const cases: { name: string; spec: Record<string, unknown>; vmi?: string; want: unknown }[] = [
    { name: 'Always → Halted', spec: { runStrategy: 'Always' }, vmi: 'u', want: { kind: 'spec', patch: { runStrategy: 'Halted' } } },
    { name: 'running: true → false', spec: { running: true }, vmi: 'u', want: { kind: 'spec', patch: { running: false } } },
    { name: 'Manual → a Stop request for the VMI', spec: { runStrategy: 'Manual' }, vmi: 'u', want: { kind: 'request', stateChangeRequests: [{ action: 'Stop', uid: 'u' }] } },
    { name: 'RerunOnFailure → a Stop request', spec: { runStrategy: 'RerunOnFailure' }, vmi: 'u', want: { kind: 'request', stateChangeRequests: [{ action: 'Stop', uid: 'u' }] } },
    { name: 'Halted without a VMI: not running (409)', spec: { runStrategy: 'Halted' }, want: { kind: 'refuse', code: 409, message: 'VM vm is not running' } },
    { name: 'Manual without a VMI: not running (409)', spec: { runStrategy: 'Manual' }, want: { kind: 'refuse', code: 409, message: 'VM vm is not running' } },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(stopAction(vm(c.spec), c.vmi), c.want));
});

describe('guest agent, secrets, deadlines, durations', () => {
  const running = (conds: { type: string; status: string }[]) => ({ metadata: { name: 'v' }, status: { phase: 'Running', conditions: conds } });
  test('freeze with an agent sets frozen; unfreeze clears it', () => {
    assert.deepEqual(freezeAnswer(running([{ type: 'AgentConnected', status: 'True' }]), undefined), { status: { fsFreezeStatus: 'frozen' } });
    assert.deepEqual(unfreezeAnswer(running([{ type: 'AgentConnected', status: 'True' }]), undefined), { status: { fsFreezeStatus: null } });
  });
  test('no agent, not running, missing, injected failure: errors', () => {
    assert.deepEqual(freezeAnswer(running([]), undefined), { code: 500, message: 'Guest agent is not responding' });
    assert.deepEqual(freezeAnswer({ status: { phase: 'Scheduled' } }, undefined), { code: 409, message: 'VMI is not running' });
    assert.equal((freezeAnswer(undefined, undefined) as { code: number }).code, 404);
    assert.deepEqual(unfreezeAnswer(running([{ type: 'AgentConnected', status: 'True' }]), 'fsfreeze is limited'), { code: 500, message: 'fsfreeze is limited' });
  });
  test('required secret volumes a container mounts block a pod; optional and unmounted ones do not', () => {
    const volumes = [{ name: 'a', secret: { secretName: 'a' } }, { name: 'b', secret: { secretName: 'b', optional: true } }, { name: 'c', projected: { sources: [{ secret: { name: 'c' } }] } }, { name: 'd', secret: { secretName: 'd' } }];
    const pod = { metadata: { namespace: 'ns' }, spec: { volumes, containers: [{ name: 'x', volumeMounts: ['a', 'b', 'c'].map((n) => ({ name: n, mountPath: `/${n}` })) }] } } as never;
    const lookups = { claim: () => undefined, volume: () => undefined, configMapExists: () => true, secretExists: (_ns: string, n: string) => n === 'c', usersElsewhere: () => [] };
    assert.deepEqual(volumeProblems(pod, 'node01', lookups).setup.map((e) => e.message), ['MountVolume.SetUp failed for volume "a" : secret "a" not found']);
  });
  test('the exporter deadline comes from DEADLINE', () => {
    assert.equal(exportDeadlineOf({ spec: { containers: [{ name: 'exporter', env: [{ name: 'DEADLINE', value: NOW }] }] } }), Date.parse(NOW));
    assert.equal(exportDeadlineOf({ spec: { containers: [{ name: 'exporter' }] } }), undefined);
  });
  test('Go durations', () => {
    assert.deepEqual(['5m0s', '0s', '1h2m3s', '300ms', 'soon', ''].map(goDurationMs), [300_000, 0, 3_723_000, 300, undefined, undefined]);
  });
});
