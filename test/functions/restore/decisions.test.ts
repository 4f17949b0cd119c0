/**
 * The restore controller's pure decisions as tables (reference-snapshot-export-backup.md §2): the
 * restored volume names (overrides, InPlace, PrefixTargetName with the FNV-32a shortening,
 * `restore-<uid>-<vol>`), the wanted restore entries, the restore PVC render, the restored VM
 * (new and existing targets, DataVolume templates, MemoryDump, the legacy firmware UUID), the
 * `spec.patches` and the relay mapping.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { legacyFirmwareUuid } from '../../../shared/api/firmware-uuid.ts';
import type { VirtualMachineRestore, VirtualMachineSnapshotContent, VolumeBackup, VolumeSnapshot } from '../../../shared/api/snapshot.ts';
import { applyJsonPatch } from '../../../shared/kube/json-patch-apply.ts';
import type { EventType, WatchedObject } from '../../../shared/relay/route.ts';
import { fnv32aHex, getName } from '../../../shared/storage/get-name.ts';
import { restoreAnnotationValue, restoreVolumeName, type NamingInput } from '../../../functions/restore/names.ts';
import { renderRestorePvc } from '../../../functions/restore/restore-pvc.ts';
import { cleanupBackendValue, relabelled } from '../../../functions/restore/backend.ts';
import { restoredVm, type RestoreVm } from '../../../functions/restore/restored-vm.ts';
import { restoreMapper } from '../../../functions/restore/wakes.ts';
import { restorePatches } from '../../../functions/restore/target.ts';
import { RestoreStepError, wantedRestores } from '../../../functions/restore/volumes.ts';

const UID = '11111111-2222-3333-4444-555555555555';
const restore = (spec: Partial<NonNullable<VirtualMachineRestore['spec']>> = {}, status?: VirtualMachineRestore['status']): VirtualMachineRestore => ({
  metadata: { name: 'r', namespace: 'ns', uid: UID },
  spec: { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'vm' }, virtualMachineSnapshotName: 's', ...spec },
  ...(status ? { status } : {}),
});

describe('restoreVolumeName', () => {
  const base: NamingInput = { restoreUid: UID, targetName: 'my-vm', policy: undefined, overrides: undefined };
  const long = 'v'.repeat(60);
  const cases: { name: string; n: Partial<NamingInput>; volume: string; want: string }[] = [
    { name: 'RandomizeNames (default): restore-<uid>-<vol>', n: {}, volume: 'disk1', want: `restore-${UID}-disk1` },
    { name: 'RandomizeNames spelled out', n: { policy: 'RandomizeNames' }, volume: 'disk1', want: `restore-${UID}-disk1` },
    { name: 'InPlace: the original claim', n: { policy: 'InPlace' }, volume: 'disk1', want: 'orig-claim' },
    { name: 'PrefixTargetName: <target>-<vol>', n: { policy: 'PrefixTargetName' }, volume: 'disk1', want: 'my-vm-disk1' },
    { name: 'PrefixTargetName, too long: cut + FNV-32a of the target + vol', n: { policy: 'PrefixTargetName', targetName: long }, volume: 'disk1', want: `${long.slice(0, 63 - 10 - 5)}-${fnv32aHex(long)}-disk1` },
    { name: 'an override wins over the policy', n: { policy: 'InPlace', overrides: [{ volumeName: 'disk1', restoreName: 'mine' }] }, volume: 'disk1', want: 'mine' },
    { name: 'an override of another volume does not apply', n: { overrides: [{ volumeName: 'other', restoreName: 'mine' }] }, volume: 'disk1', want: `restore-${UID}-disk1` },
    { name: 'an override without a restoreName does not apply', n: { policy: 'InPlace', overrides: [{ volumeName: 'disk1' }] }, volume: 'disk1', want: 'orig-claim' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const got = restoreVolumeName({ ...base, ...c.n }, c.volume, 'orig-claim');
      // assert
      assert.equal(got, c.want);
      assert.ok(got.length <= 63 || c.n.policy !== 'PrefixTargetName');
    });
  }
  test('lastRestoreUID is <name>-<uid>', () => assert.equal(restoreAnnotationValue(restore()), `r-${UID}`));
});

const backup = (volumeName: string, claim: string, vs: string | undefined, extra: Partial<VolumeBackup['persistentVolumeClaim']['metadata']> = {}): VolumeBackup => ({
  volumeName,
  persistentVolumeClaim: { metadata: { name: claim, ...extra }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sc', volumeMode: 'Filesystem' } },
  ...(vs ? { volumeSnapshotName: vs } : {}),
});
const content = (backups: VolumeBackup[], volumes: { name: string; [k: string]: unknown }[] = []): VirtualMachineSnapshotContent =>
  ({ spec: { source: { virtualMachine: { metadata: { name: 'vm', namespace: 'ns', uid: 'vm-uid' }, spec: { template: { spec: { volumes } } } } }, volumeBackups: backups } }) as unknown as VirtualMachineSnapshotContent;

describe('wantedRestores', () => {
  const cases: { name: string; r: VirtualMachineRestore; c: VirtualMachineSnapshotContent; want: unknown }[] = [
    { name: 'one entry per volume backup', r: restore(), c: content([backup('a', 'ca', 'vs-a'), backup('b', 'cb', 'vs-b')]), want: [{ volumeName: 'a', persistentVolumeClaim: `restore-${UID}-a`, volumeSnapshotName: 'vs-a' }, { volumeName: 'b', persistentVolumeClaim: `restore-${UID}-b`, volumeSnapshotName: 'vs-b' }] },
    { name: 'MemoryDump volumes of the source VM are left out', r: restore(), c: content([backup('a', 'ca', 'vs-a'), backup('dump', 'cd', 'vs-d')], [{ name: 'dump', memoryDump: { claimName: 'cd' } }]), want: [{ volumeName: 'a', persistentVolumeClaim: `restore-${UID}-a`, volumeSnapshotName: 'vs-a' }] },
    { name: 'an existing entry is kept as it is (its dataVolumeName too)', r: restore({}, { restores: [{ volumeName: 'a', persistentVolumeClaim: 'kept', volumeSnapshotName: 'old', dataVolumeName: 'dv' }] }), c: content([backup('a', 'ca', 'vs-a')]), want: [{ volumeName: 'a', persistentVolumeClaim: 'kept', volumeSnapshotName: 'old', dataVolumeName: 'dv' }] },
    { name: 'InPlace names the claim after the original', r: restore({ volumeRestorePolicy: 'InPlace' }), c: content([backup('a', 'ca', 'vs-a')]), want: [{ volumeName: 'a', persistentVolumeClaim: 'ca', volumeSnapshotName: 'vs-a' }] },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(wantedRestores(c.r, c.c), c.want));
  }
  test('a backup without a VolumeSnapshot name is an error with KubeVirt text', () => {
    assert.throws(() => wantedRestores(restore(), content([backup('a', 'ca', undefined)])), (e: unknown) => e instanceof RestoreStepError && e.message === 'VolumeSnapshotName missing a');
  });
});

describe('renderRestorePvc', () => {
  const vs = (restoreSize?: string): VolumeSnapshot => ({ metadata: { name: 'vs-a' }, status: { readyToUse: true, ...(restoreSize ? { restoreSize } : {}) } }) as VolumeSnapshot;
  const entry = { volumeName: 'a', persistentVolumeClaim: 'restore-a', volumeSnapshotName: 'vs-a' };
  const src = { name: 'vm', namespace: 'ns', uid: 'vm-uid' };
  const ownedBySource = { ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm', uid: 'vm-uid', controller: true }] };
  const cases: { name: string; r?: VirtualMachineRestore; entry?: typeof entry & { dataVolumeName?: string }; b?: VolumeBackup; size?: string; target?: { name: string; uid: string }; check: (p: ReturnType<typeof renderRestorePvc>) => void }[] = [
    {
      name: 'labels: the backup claim minus persistent-state-for, plus the source VM; annotations: provisioner and CDI ones dropped, contentType kept, the restore added',
      b: backup('a', 'ca', 'vs-a', {
        labels: { app: 'x', 'persistent-state-for': 'vm' },
        annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'volume.beta.kubernetes.io/storage-provisioner': 'p', 'volume.kubernetes.io/selected-node': 'n', 'cdi.kubevirt.io/storage.pod.phase': 'x', 'cdi.kubevirt.io/storage.contentType': 'kubevirt', 'k8s.io/CloneRequest': 'c', 'k8s.io/CloneOf': 'd', mine: 'kept' },
      }),
      check: (p) => {
        assert.deepEqual(p.metadata?.labels, { app: 'x', 'restore.kubevirt.io/source-vm-name': 'vm', 'restore.kubevirt.io/source-vm-namespace': 'ns' });
        assert.deepEqual(p.metadata?.annotations, { 'cdi.kubevirt.io/storage.contentType': 'kubevirt', mine: 'kept', 'restore.kubevirt.io/name': 'r', 'restore.kubevirt.io/lastRestoreUID': `r-${UID}` });
      },
    },
    {
      name: 'spec: the backup claim access modes, class and volume mode; the VolumeSnapshot as dataSource and dataSourceRef',
      check: (p) => {
        const ref = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'vs-a' };
        assert.deepEqual(p.spec, { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sc', volumeMode: 'Filesystem', dataSource: ref, dataSourceRef: ref });
        assert.equal(p.metadata?.name, 'restore-a');
      },
    },
    { name: 'a larger restoreSize replaces the request', size: '2Gi', check: (p) => assert.equal(p.spec?.resources?.requests?.storage, '2Gi') },
    { name: 'a smaller restoreSize does not', size: '512Mi', check: (p) => assert.equal(p.spec?.resources?.requests?.storage, '1Gi') },
    { name: 'an existing target owns it', target: { name: 't', uid: 't-uid' }, check: (p) => assert.deepEqual(p.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 't', uid: 't-uid', controller: true, blockOwnerDeletion: true }]) },
    { name: 'no target, original owned by the source VM: marked owned-by-vm', b: backup('a', 'ca', 'vs-a', ownedBySource), check: (p) => assert.equal(p.metadata?.annotations?.['restore.kubevirt.io/owned-by-vm'], 'r') },
    { name: 'no target, original not owned: neither', check: (p) => assert.equal(p.metadata?.ownerReferences ?? p.metadata?.annotations?.['restore.kubevirt.io/owned-by-vm'], undefined) },
    { name: 'volumeOwnershipPolicy None: no owner', r: restore({ volumeOwnershipPolicy: 'None' }), target: { name: 't', uid: 't-uid' }, check: (p) => assert.equal(p.metadata?.ownerReferences, undefined) },
    { name: 'for a DataVolume: populatedFor, no owner', entry: { ...entry, dataVolumeName: 'dv' }, target: { name: 't', uid: 't-uid' }, check: (p) => assert.deepEqual([p.metadata?.annotations?.['cdi.kubevirt.io/storage.populatedFor'], p.metadata?.ownerReferences], ['dv', undefined]) },
    { name: 'the override labels and annotations on top', r: restore({ volumeRestoreOverrides: [{ volumeName: 'a', labels: { l: '1' }, annotations: { 'restore.kubevirt.io/name': 'over' } }] }), check: (p) => assert.deepEqual([p.metadata?.labels?.l, p.metadata?.annotations?.['restore.kubevirt.io/name']], ['1', 'over']) },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const p = renderRestorePvc({ restore: c.r ?? restore(), entry: c.entry ?? entry, backup: c.b ?? backup('a', 'ca', 'vs-a'), vs: vs(c.size), sourceVm: src, target: c.target });
      // assert
      c.check(p);
    });
  }
});

describe('restoredVm', () => {
  const snapshotVm = (spec: Record<string, unknown> = {}) => ({
    metadata: { name: 'vm', labels: { app: 'a' }, annotations: { note: 'n' } },
    spec: {
      runStrategy: 'Always',
      dataVolumeTemplates: [{ metadata: { name: 'vm-dv' }, spec: { storage: {} } }],
      template: {
        spec: {
          domain: { devices: {} },
          volumes: [
            { name: 'pvc', persistentVolumeClaim: { claimName: 'vm-pvc' } },
            { name: 'dvt', dataVolume: { name: 'vm-dv' } },
            { name: 'dvplain', dataVolume: { name: 'other-dv' } },
            { name: 'dump', memoryDump: { claimName: 'vm-dump' } },
            { name: 'cd', containerDisk: { image: 'x' } },
          ],
        },
      },
      ...spec,
    },
  });
  const restores = [
    { volumeName: 'pvc', persistentVolumeClaim: 'r-pvc', volumeSnapshotName: 'vs1' },
    { volumeName: 'dvt', persistentVolumeClaim: 'r-dvt', volumeSnapshotName: 'vs2', dataVolumeName: 'r-dvt' },
    { volumeName: 'dvplain', persistentVolumeClaim: 'r-plain', volumeSnapshotName: 'vs3' },
  ];
  const existing = (spec: Record<string, unknown>): RestoreVm => ({ metadata: { name: 'vm', uid: 'u', resourceVersion: '7', labels: { now: 'x' } }, spec: spec as RestoreVm['spec'] });
  test('volumes: PVC → restore claim; DataVolume with template → renamed template; without → PVC volume; MemoryDump dropped', () => {
    // act
    const vm = restoredVm(restore({ target: { kind: 'VirtualMachine', name: 'new' } }), snapshotVm(), restores, undefined) as RestoreVm;
    // assert
    assert.deepEqual(vm.spec?.template?.spec?.volumes, [
      { name: 'pvc', persistentVolumeClaim: { claimName: 'r-pvc' } },
      { name: 'dvt', dataVolume: { name: 'r-dvt' } },
      { name: 'dvplain', persistentVolumeClaim: { claimName: 'r-plain' } },
      { name: 'cd', containerDisk: { image: 'x' } },
    ]);
    assert.deepEqual(vm.spec?.dataVolumeTemplates?.map((t) => t.metadata?.name), ['r-dvt']);
  });
  const cases: { name: string; target?: RestoreVm; targetName?: string; snap?: Record<string, unknown>; want: (vm: RestoreVm) => void }[] = [
    { name: 'new VM: runStrategy becomes Halted, the snapshot VM labels and annotations, named after the target', targetName: 'new', want: (vm) => assert.deepEqual([vm.spec?.runStrategy, vm.metadata?.name, vm.metadata?.namespace, vm.metadata?.labels, vm.metadata?.annotations], ['Halted', 'new', 'ns', { app: 'a' }, { note: 'n', 'restore.kubevirt.io/lastRestoreUID': `r-${UID}` }]) },
    { name: 'new VM from a `running` VM: running false', targetName: 'new', snap: { running: true, runStrategy: undefined }, want: (vm) => assert.deepEqual([vm.spec?.running, vm.spec?.runStrategy], [false, undefined]) },
    { name: 'existing VM: keeps its metadata and run strategy', target: existing({ runStrategy: 'Manual' }), want: (vm) => assert.deepEqual([vm.spec?.runStrategy, vm.metadata?.labels, vm.metadata?.resourceVersion], ['Manual', { now: 'x' }, '7']) },
    { name: 'existing VM on `running`: running false, no runStrategy', target: existing({ running: true }), want: (vm) => assert.deepEqual([vm.spec?.running, 'runStrategy' in (vm.spec ?? {})], [false, false]) },
    { name: 'restored under its own name: the legacy firmware UUID', target: existing({ runStrategy: 'Halted' }), want: (vm) => assert.equal((vm.spec?.template?.spec?.domain as { firmware?: { uuid?: string } }).firmware?.uuid, legacyFirmwareUuid('vm')) },
    { name: 'under another name: none', targetName: 'new', want: (vm) => assert.equal((vm.spec?.template?.spec?.domain as { firmware?: unknown }).firmware, undefined) },
    {
      name: 'a firmware UUID of its own is kept',
      target: existing({ runStrategy: 'Halted' }),
      snap: { template: { spec: { domain: { firmware: { uuid: 'mine' } }, volumes: [] } } },
      want: (vm) => assert.equal((vm.spec?.template?.spec?.domain as { firmware?: { uuid?: string } }).firmware?.uuid, 'mine'),
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const vm = restoredVm(restore({ target: { kind: 'VirtualMachine', name: c.targetName ?? 'vm' } }), snapshotVm(c.snap), restores, c.target);
      // assert
      assert.ok(!('error' in vm));
      c.want(vm);
    });
  }
  test('a DataVolume template without its dataVolumeName yet is an error', () => {
    const vm = restoredVm(restore(), snapshotVm(), [{ volumeName: 'dvt', persistentVolumeClaim: 'r-dvt', volumeSnapshotName: 'vs2' }], undefined);
    assert.deepEqual(vm, { error: 'DataVolumeName for dv vm-dv should have been updated already' });
  });
});

describe('spec.patches', () => {
  const vm = { metadata: { name: 'new', labels: { a: '1' } }, spec: { template: { spec: { domain: { devices: { interfaces: [{ name: 'default', macAddress: 'old' }] } } } } } };
  const cases: { name: string; patches: string[]; want: unknown }[] = [
    { name: 'one operation per string, applied in order', patches: ['{"op":"replace","path":"/metadata/labels/a","value":"2"}', '{"op":"add","path":"/metadata/labels/b","value":"3"}'], want: { a: '2', b: '3' } },
    { name: 'a string may hold an array', patches: ['[{"op":"remove","path":"/metadata/labels/a"},{"op":"add","path":"/metadata/labels/c","value":"x"}]'], want: { c: 'x' } },
    { name: 'replace of an absent member adds it (lenient, as KubeVirt applies them)', patches: ['{"op":"replace","path":"/metadata/labels/z","value":"9"}'], want: { a: '1', z: '9' } },
    { name: 'remove of an absent member is a no-op', patches: ['{"op":"remove","path":"/metadata/labels/none"}'], want: { a: '1' } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const out = applyJsonPatch(vm, restorePatches(restore({ patches: c.patches })));
      // assert
      assert.deepEqual(out.metadata.labels, c.want);
      assert.deepEqual(vm.metadata.labels, { a: '1' }, 'the input untouched');
    });
  }
  test('a clone MAC patch on an array element', () => {
    const out = applyJsonPatch(vm, restorePatches(restore({ patches: ['{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":"new"}'] })));
    assert.equal(out.spec.template.spec.domain.devices.interfaces[0]?.macAddress, 'new');
  });
  test('a failed test op throws', () => assert.throws(() => applyJsonPatch(vm, [{ op: 'test', path: '/metadata/name', value: 'other' }])));
});

describe('backend claim labels', () => {
  const cases: { name: string; labels: Record<string, string> | undefined; set: Record<string, string | undefined>; want: Record<string, string> | undefined }[] = [
    { name: 'the original gives up persistent-state-for for the cleanup label', labels: { 'persistent-state-for': 'vm', app: 'a' }, set: { 'persistent-state-for': undefined, 'restore.kubevirt.io/cleanup-backend-pvc': cleanupBackendValue('vm') }, want: { app: 'a', 'restore.kubevirt.io/cleanup-backend-pvc': 'persistent-state-for-vm' } },
    { name: 'the restored claim takes persistent-state-for=<target>', labels: { app: 'a' }, set: { 'persistent-state-for': 'new' }, want: { app: 'a', 'persistent-state-for': 'new' } },
    { name: 'already so: nothing to write', labels: { 'persistent-state-for': 'new' }, set: { 'persistent-state-for': 'new' }, want: undefined },
    { name: 'removing an absent label: nothing to write', labels: undefined, set: { x: undefined }, want: undefined },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(relabelled(c.labels, c.set), c.want));
  test('the cleanup value of a long target name is shortened with FNV-32a', () => {
    const long = 'n'.repeat(60);
    assert.equal(cleanupBackendValue(long), getName('persistent-state-for', long, 63));
    assert.equal(cleanupBackendValue('vm'), 'persistent-state-for-vm');
    assert.ok(cleanupBackendValue(long).length <= 63);
  });
});

describe('restore relay mapping', () => {
  const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'ns', ...extra });
  const r = (name: string, vm: string, snap: string, kind = 'VirtualMachine'): WatchedObject => ({ metadata: meta(name), spec: { target: { apiGroup: 'kubevirt.io', kind, name: vm }, virtualMachineSnapshotName: snap } });
  const annotated = (name: string, restoreName?: string): WatchedObject => ({ metadata: meta(name, restoreName ? { annotations: { 'restore.kubevirt.io/name': restoreName } } : {}) });
  const cases: { name: string; events: [string, EventType, WatchedObject][]; want: string[] }[] = [
    { name: 'a restore wakes itself', events: [['VirtualMachineRestore', 'ADDED', r('r', 'vm', 's')]], want: ['ns/r'] },
    { name: 'a PVC or DataVolume annotated restore.kubevirt.io/name wakes that restore', events: [['PersistentVolumeClaim', 'MODIFIED', annotated('p', 'r')], ['DataVolume', 'ADDED', annotated('d', 'r2')], ['PersistentVolumeClaim', 'MODIFIED', annotated('other')]], want: ['ns/r', 'ns/r2'] },
    { name: 'a VM wakes the restores targeting it (deleted too: a new-VM restore may go on)', events: [['VirtualMachineRestore', 'ADDED', r('r1', 'vm', 's')], ['VirtualMachineRestore', 'ADDED', r('r2', 'vm', 's')], ['VirtualMachine', 'MODIFIED', { metadata: meta('vm') }], ['VirtualMachine', 'DELETED', { metadata: meta('vm') }]], want: ['ns/r1', 'ns/r2', 'ns/r1', 'ns/r2', 'ns/r1', 'ns/r2'] },
    { name: 'a snapshot wakes the restores of it', events: [['VirtualMachineRestore', 'ADDED', r('r', 'vm', 's')], ['VirtualMachineSnapshot', 'MODIFIED', { metadata: meta('s') }], ['VirtualMachineSnapshot', 'MODIFIED', { metadata: meta('other') }]], want: ['ns/r', 'ns/r'] },
    { name: 'a target of another kind is not indexed', events: [['VirtualMachineRestore', 'ADDED', r('r', 'vm', 's', 'Pod')], ['VirtualMachine', 'MODIFIED', { metadata: meta('vm') }]], want: ['ns/r'] },
    { name: 'a deleted restore leaves the indexes', events: [['VirtualMachineRestore', 'ADDED', r('r', 'vm', 's')], ['VirtualMachineRestore', 'DELETED', r('r', 'vm', 's')], ['VirtualMachine', 'MODIFIED', { metadata: meta('vm') }], ['VirtualMachineSnapshot', 'MODIFIED', { metadata: meta('s') }]], want: ['ns/r', 'ns/r'] },
    { name: 'VMIs are not watched', events: [['VirtualMachineRestore', 'ADDED', r('r', 'vm', 's')], ['VirtualMachineInstance', 'DELETED', { metadata: meta('vm') }]], want: ['ns/r'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // arrange
      const map = restoreMapper();
      // act
      const got = c.events.flatMap(([kind, type, obj]) => map(kind, type, obj));
      // assert
      assert.ok(got.every((t) => t.controller === 'restore'));
      assert.deepEqual(got.map((t) => t.key), c.want);
    });
  }
});
