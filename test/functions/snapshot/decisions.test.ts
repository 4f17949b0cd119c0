/**
 * The snapshot controller's decisions as tables (reference-snapshot-export-backup.md §0, §1):
 * GetName shortening, condition updates, the source lock, VolumeSnapshotClass choice, the
 * content's volume backups and status, the snapshot's status and phases, deadlines.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fnv32aHex, getName } from '../../../shared/storage/get-name.ts';
import { updateCondition } from '../../../shared/storage/conditions.ts';
import { backendVolumeName, vmClaims } from '../../../shared/storage/vm-volumes.ts';
import { checkLock } from '../../../functions/snapshot/lock-check.ts';
import { volumeSnapshotClassFor } from '../../../functions/snapshot/snapshot-class.ts';
import { volumeBackupsFor, sourceSpecFor } from '../../../functions/snapshot/render-content.ts';
import { aggregate, nextError } from '../../../functions/snapshot/content-status.ts';
import { computeSnapshotStatus } from '../../../functions/snapshot/snapshot-status.ts';
import { deadlineExceeded, durationMs, shouldDeleteContent, timeUntilDeadlineMs } from '../../../functions/snapshot/deadline.ts';
import { sourceState } from '../../../functions/snapshot/source-state.ts';
import type { Pvc, VirtualMachine, VirtualMachineSnapshot, VirtualMachineSnapshotContent } from '../../../shared/api/snapshot.ts';

const T0 = '2026-12-01T10:00:00Z';
const T1 = '2026-12-01T10:00:30Z';
const ms = (iso: string) => Date.parse(iso);

describe('GetName (library-go) and FNV-32a', () => {
  test('FNV-32a of known inputs', () => {
    assert.deepEqual([fnv32aHex(''), fnv32aHex('a'), fnv32aHex('foobar')], ['811c9dc5', 'e40c292c', 'bf9cf968']);
  });
  test('fits: base-suffix', () => assert.equal(getName('virt-export', 'test', 63), 'virt-export-test'));
  test('too long: base cut + hash(base) + suffix, exactly 63', () => {
    const base = 'x'.repeat(70);
    const n = getName(base, 'disk', 63);
    assert.equal(n, `${'x'.repeat(63 - 10 - 4)}-${fnv32aHex(base)}-disk`);
    assert.equal(n.length, 63);
  });
  test('suffix too long: base cut + hash(base-suffix), cut to max', () => {
    const suffix = 's'.repeat(60);
    const n = getName('base', suffix, 63);
    assert.equal(n, `base-${fnv32aHex(`base-${suffix}`)}`);
  });
  test('the backend volume name', () => assert.equal(backendVolumeName('testvm'), 'persistent-state-for-testvm'));
});

describe('snapshot conditions: first-insertion order, timestamps move only with status or reason', () => {
  test('append, keep, replace', () => {
    let c = updateCondition([], 'Progressing', 'True', 'a', T0);
    c = updateCondition(c, 'Ready', 'False', 'Not ready', T0);
    c = updateCondition(c, 'Progressing', 'True', 'a', T1);
    assert.deepEqual(c.map((x) => [x.type, x.reason, x.lastTransitionTime]), [['Progressing', 'a', T0], ['Ready', 'Not ready', T0]], 'same status and reason: kept with its old time');
    c = updateCondition(c, 'Progressing', 'True', 'b', T1);
    assert.deepEqual(c.map((x) => [x.type, x.reason, x.lastTransitionTime]), [['Progressing', 'b', T1], ['Ready', 'Not ready', T0]], 'reason changed: replaced in place');
  });
  test('exports also compare the message', () => {
    const c = updateCondition([], 'Ready', 'False', 'r', T0, { message: 'm1', compareMessage: true });
    assert.equal(updateCondition(c, 'Ready', 'False', 'r', T1, { message: 'm2', compareMessage: true })[0]?.lastTransitionTime, T1);
    assert.equal(updateCondition(c, 'Ready', 'False', 'r', T1, { message: 'm2' })[0]?.lastTransitionTime, T0);
  });
});

const vm = (extra: Partial<VirtualMachine['status']> = {}, finalizers: string[] = []): VirtualMachine => ({
  metadata: { name: 'testvm', namespace: 'default', uid: 'vm-uid', finalizers },
  spec: { template: { spec: { volumes: [{ name: 'rootdisk', dataVolume: { name: 'alpine-dv' } }, { name: 'data', persistentVolumeClaim: { claimName: 'data-pvc' } }, { name: 'cloudinit', cloudInitNoCloud: {} }] } } },
  status: { ...extra },
});
const pvc = (name: string, phase = 'Bound', extra: Partial<Pvc['metadata']> = {}): Pvc => ({ metadata: { name, namespace: 'default', managedFields: [{}], ...extra }, spec: { storageClassName: 'sc' }, status: { phase } });

describe('source lock (§1.3)', () => {
  const claims = vmClaims(vm(), undefined);
  const dvOwned = { ownerReferences: [{ apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: 'alpine-dv', uid: 'dv-uid', controller: true }] };
  const facts = (pvcs: Pvc[], over: Partial<Parameters<typeof checkLock>[0]> = {}) => ({
    vm: vm(),
    online: true,
    claims,
    backendMissing: false,
    pvcs: new Map(pvcs.map((p) => [p.metadata!.name!, p])),
    dataVolumePhases: new Map([['alpine-dv', 'Succeeded']]),
    claimsInUse: () => ({ pods: 0, claims: [] }),
    snapshotName: 'snap',
    ...over,
  });
  const cases: { name: string; f: Parameters<typeof checkLock>[0]; want: string | true }[] = [
    { name: 'all claims bound and populated: lock', f: facts([pvc('alpine-dv', 'Bound', dvOwned), pvc('data-pvc')]), want: true },
    { name: 'a claim missing', f: facts([pvc('data-pvc')]), want: 'Source not locked source default/testvm volume doesnt exist: alpine-dv' },
    { name: 'a claim pending', f: facts([pvc('alpine-dv', 'Pending'), pvc('data-pvc')]), want: 'Source not locked source default/testvm volume not bound: alpine-dv' },
    { name: 'a claim deleting', f: facts([pvc('alpine-dv', 'Bound', { deletionTimestamp: T0 }), pvc('data-pvc')]), want: 'Source not locked source default/testvm volume is being deleted: alpine-dv' },
    { name: 'its DataVolume not Succeeded', f: facts([pvc('alpine-dv', 'Bound', dvOwned), pvc('data-pvc')], { dataVolumePhases: new Map([['alpine-dv', 'ImportInProgress']]) }), want: 'Source not locked source default/testvm volume not populated: alpine-dv' },
    { name: 'offline with pods using the claims', f: facts([pvc('alpine-dv'), pvc('data-pvc')], { online: false, claimsInUse: () => ({ pods: 1, claims: ['data-pvc'] }) }), want: 'Source not locked source is offline but 1 pods using PVCs [data-pvc]' },
    { name: 'another snapshot holds the lock', f: facts([pvc('alpine-dv'), pvc('data-pvc')], { vm: vm({ snapshotInProgress: 'other' }) }), want: 'Source not locked snapshot "other" in progress' },
    { name: 'backend claim missing: silent', f: facts([pvc('alpine-dv'), pvc('data-pvc')], { backendMissing: true }), want: 'Source not locked' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = checkLock(c.f);
      if (c.want === true) assert.deepEqual(r, { ok: true });
      else assert.deepEqual(r, { ok: false, message: c.want });
    });
  }
  test('locked needs both snapshotInProgress and the finalizer', () => {
    assert.equal(sourceState(vm({ snapshotInProgress: 'snap' }), undefined, 'snap').locked, false);
    assert.equal(sourceState(vm({ snapshotInProgress: 'snap' }, ['snapshot.kubevirt.io/snapshot-source-protection']), undefined, 'snap').locked, true);
  });
});

describe('VolumeSnapshotClass choice (§1.7)', () => {
  const sc = { metadata: { name: 'sc' }, provisioner: 'drv' };
  const vsc = (name: string, driver = 'drv', def = false) => ({ metadata: { name, ...(def ? { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': '' } } : {}) }, driver });
  const cases: { name: string; sc?: typeof sc; profile?: string; classes: ReturnType<typeof vsc>[]; want: unknown }[] = [
    { name: 'storage class not cached: none', classes: [vsc('a')], want: { name: '' } },
    { name: 'one matching driver', sc, classes: [vsc('a'), vsc('b', 'other')], want: { name: 'a' } },
    { name: 'none matching', sc, classes: [vsc('b', 'other')], want: { name: '' } },
    { name: 'several: the one with the default annotation key (any value)', sc, classes: [vsc('a'), vsc('b', 'drv', true)], want: { name: 'b' } },
    { name: 'several, no default: error', sc, classes: [vsc('a'), vsc('b')], want: { error: '2 matching VolumeSnapshotClasses for sc' } },
    { name: 'StorageProfile class that exists', sc, profile: 'b', classes: [vsc('a'), vsc('b', 'x')], want: { name: 'b' } },
    { name: 'StorageProfile class that does not', sc, profile: 'zz', classes: [vsc('a')], want: { name: '' } },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(volumeSnapshotClassFor('sc', c.sc, c.profile, c.classes), c.want));
});

describe('content (§1.4, §1.5)', () => {
  test('volume backups: bound claims with a class, VM volume order, managedFields dropped, named vmsnapshot-<uid>-volume-<vol>', () => {
    const pvcs = new Map([['alpine-dv', pvc('alpine-dv')], ['data-pvc', pvc('data-pvc', 'Pending')]]);
    const backups = volumeBackupsFor('s-uid', vmClaims(vm(), undefined), pvcs, () => true);
    assert.deepEqual(backups.map((b) => [b.volumeName, b.volumeSnapshotName, b.persistentVolumeClaim.metadata.managedFields]), [['rootdisk', 'vmsnapshot-s-uid-volume-rootdisk', undefined]]);
    assert.deepEqual(volumeBackupsFor('s-uid', vmClaims(vm(), undefined), pvcs, () => false), [], 'no VolumeSnapshotClass: skipped');
  });
  test('online: the revision spec with the live volumes, disks and templates', () => {
    const live = vm();
    live.spec!.template!.spec!.domain = { devices: { disks: [{ name: 'rootdisk' }] } };
    const spec = sourceSpecFor(live, { running: true, template: { spec: { volumes: [], domain: { devices: { disks: [] } } } } });
    assert.equal(spec.running, true, 'from the revision');
    assert.deepEqual(spec.template?.spec?.volumes?.map((v) => v.name), ['rootdisk', 'data', 'cloudinit']);
    assert.deepEqual(spec.template?.spec?.domain?.devices?.disks, [{ name: 'rootdisk' }]);
  });
  const vs = (name: string, status: Record<string, unknown>) => ({ metadata: { name }, status });
  const cases: { name: string; found: ReturnType<typeof vs>[]; deleted?: string[]; skipped?: string[]; want: [boolean, boolean, string] }[] = [
    { name: 'no volume snapshots: created and ready', found: [], want: [true, true, ''] },
    { name: 'cut, not ready', found: [vs('a', { creationTime: T0, readyToUse: false })], want: [true, false, ''] },
    { name: 'all ready', found: [vs('a', { creationTime: T0, readyToUse: true }), vs('b', { creationTime: T0, readyToUse: true })], want: [true, true, ''] },
    { name: 'an error', found: [vs('a', { readyToUse: false, error: { message: 'boom', time: T0 } })], want: [false, false, 'VolumeSnapshot a error: boom'] },
    { name: 'missing after creation', found: [], deleted: ['a', 'b'], want: [false, false, 'VolumeSnapshots (a,b) missing'] },
    { name: 'skipped for a deleted VM snapshot', found: [], skipped: ['a'], want: [false, false, 'VolumeSnapshots (a) skipped because vm snapshot is deleted'] },
  ];
  for (const c of cases) {
    test(`aggregate: ${c.name}`, () => {
      const a = aggregate(c.found, c.deleted ?? [], c.skipped ?? []);
      assert.deepEqual([a.created, a.ready, a.errorMessage], c.want);
    });
  }
  test('error time moves only with the message; cleared when empty; kept once ready', () => {
    assert.deepEqual(nextError({ time: T0, message: 'm' }, 'm', false, T1), { time: T0, message: 'm' });
    assert.deepEqual(nextError({ time: T0, message: 'm' }, 'n', false, T1), { time: T1, message: 'n' });
    assert.equal(nextError({ time: T0, message: 'm' }, '', false, T1), undefined);
    assert.deepEqual(nextError({ time: T0, message: 'm' }, 'n', true, T1), { time: T0, message: 'm' });
  });
});

describe('snapshot status (§1.6) and deadlines (§1.2)', () => {
  const snap = (status?: VirtualMachineSnapshot['status'], spec: VirtualMachineSnapshot['spec'] = {}, meta: Partial<VirtualMachineSnapshot['metadata']> = {}): VirtualMachineSnapshot => ({
    metadata: { name: 'snap', namespace: 'default', uid: 's-uid', creationTimestamp: T0, ...meta },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'testvm' }, ...spec },
    ...(status ? { status } : {}),
  });
  const online = { online: true, paused: false, guestAgent: true, frozen: false, locked: true };
  const facts = (over: Partial<Parameters<typeof computeSnapshotStatus>[1]> = {}) => ({ source: vm(), state: online, lockMessage: 'Source locked and operation in progress', content: undefined, nowMs: ms(T1), nowIso: T1, ...over });
  test('first pass, locked source online with an agent: InProgress, Online + GuestAgent', () => {
    const st = computeSnapshotStatus(snap(), facts());
    assert.deepEqual(st, {
      readyToUse: false,
      sourceUID: 'vm-uid',
      phase: 'InProgress',
      indications: ['GuestAgent', 'Online'],
      sourceIndications: [
        { indication: 'GuestAgent', message: 'Guest agent was active and attempted to quiesce the filesystem for application consistency.' },
        { indication: 'Online', message: 'Snapshot taken while the VM was running. Consistency depends on guest-agent quiescing.' },
      ],
      conditions: [
        { type: 'Progressing', status: 'True', reason: 'Source locked and operation in progress', lastProbeTime: null, lastTransitionTime: T1 },
        { type: 'Ready', status: 'False', reason: 'Not ready', lastProbeTime: null, lastTransitionTime: T1 },
      ],
    });
  });
  test('lock failure text goes in the Progressing reason; offline has no indications', () => {
    const st = computeSnapshotStatus(snap({ indications: ['Online'] }), facts({ state: { ...online, online: false, locked: false }, lockMessage: 'Source not locked source default/testvm volume not bound: alpine-dv' }));
    assert.equal(st.conditions?.[0]?.reason, 'Source not locked source default/testvm volume not bound: alpine-dv');
    assert.equal(st.conditions?.[0]?.status, 'False');
    assert.equal(st.indications, undefined);
  });
  test('no guest agent, paused, quiesce timeout', () => {
    assert.deepEqual(computeSnapshotStatus(snap(), facts({ state: { ...online, guestAgent: false } })).indications, ['NoGuestAgent', 'Online']);
    assert.deepEqual(computeSnapshotStatus(snap(), facts({ state: { ...online, paused: true } })).indications, ['Online', 'Paused']);
    assert.deepEqual(computeSnapshotStatus(snap({ error: { message: 'fsfreeze is limited' } }), facts()).indications, ['GuestAgent', 'Online', 'QuiesceTimeout']);
  });
  test('source missing: Progressing False "Source does not exist"', () => {
    assert.equal(computeSnapshotStatus(snap(), facts({ source: undefined, state: undefined })).conditions?.[0]?.reason, 'Source does not exist');
  });
  test('content with a creationTime: Succeeded (even before readyToUse), PartialSnapshot appended', () => {
    const content: VirtualMachineSnapshotContent = {
      metadata: { name: 'vmsnapshot-content-s-uid' },
      spec: { source: { virtualMachine: { spec: vm().spec! } }, volumeBackups: [{ volumeName: 'rootdisk', persistentVolumeClaim: { metadata: {}, spec: {} } }] },
      status: { creationTime: T1, readyToUse: false },
    };
    const st = computeSnapshotStatus(snap({ indications: ['GuestAgent', 'Online'] }), facts({ content }));
    assert.equal(st.phase, 'Succeeded');
    assert.equal(st.readyToUse, false);
    assert.deepEqual(st.snapshotVolumes, { includedVolumes: ['rootdisk'], excludedVolumes: ['data', 'cloudinit'] });
    assert.deepEqual(st.indications, ['GuestAgent', 'Online', 'PartialSnapshot'], 'appended, not sorted');
    assert.deepEqual(st.conditions?.map((c) => [c.type, c.status, c.reason]), [['Progressing', 'False', 'Operation complete'], ['Ready', 'False', 'Not ready']]);
  });
  test('deadline missed: Failed, Failure condition; an error overrides Progressing', () => {
    const late = { nowMs: ms(T0) + 5 * 60_000 + 1000, nowIso: '2026-12-01T10:05:01Z' };
    const st = computeSnapshotStatus(snap(), facts(late));
    assert.equal(st.phase, 'Failed');
    assert.deepEqual(st.conditions?.map((c) => [c.type, c.status, c.reason]), [['Failure', 'True', 'snapshot deadline exceeded'], ['Progressing', 'False', 'Operation failed'], ['Ready', 'False', 'Not ready']]);
    const err = computeSnapshotStatus(snap({ error: { message: 'x', time: T0 } }), facts());
    assert.equal(err.conditions?.find((c) => c.type === 'Progressing')?.reason, 'In error state');
  });
  test('deleting: phase Deleting', () => assert.equal(computeSnapshotStatus(snap(undefined, {}, { deletionTimestamp: T1 }), facts()).phase, 'Deleting'));
  test('deadline arithmetic', () => {
    assert.equal(timeUntilDeadlineMs(snap(), ms(T1)), 5 * 60_000 - 30_000);
    assert.equal(timeUntilDeadlineMs(snap(undefined, { failureDeadline: '0s' }), ms(T1) + 1e9), 0, 'no deadline');
    assert.equal(deadlineExceeded(snap(undefined, { failureDeadline: '10s' }), ms(T1)), true);
    assert.equal(deadlineExceeded(snap({ phase: 'Succeeded' }, { failureDeadline: '10s' }), ms(T1)), false, 'only while progressing');
    assert.deepEqual(['5m0s', '1h', '30s', '0s', 'x'].map(durationMs), [300_000, 3_600_000, 30_000, 0, undefined]);
  });
  test('Retain keeps only a ready content', () => {
    const ready = { status: { readyToUse: true } };
    assert.equal(shouldDeleteContent(snap(undefined, { deletionPolicy: 'Retain' }), ready), false);
    assert.equal(shouldDeleteContent(snap(undefined, { deletionPolicy: 'Retain' }), { status: { readyToUse: false } }), true);
    assert.equal(shouldDeleteContent(snap(), ready), true);
  });
});
