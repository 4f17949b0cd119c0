/**
 * The restore controller end to end: sandbox cluster with its storage side (provisioner that
 * restores claims from VolumeSnapshots, CSI snapshotter, CDI, virt-api's `stop`) ← relay →
 * SQLite queue → restore, snapshot, VM and VMI functions (LocalRuntime). What the test does is
 * what a user does: snapshot a VM, change it, and create VirtualMachineRestores — into the
 * stopped VM, into a running one (which waits, or is stopped for it), and into a new VM.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readOnly } from '../../ops/cluster-reader.ts';
import { diagnose, DIAGNOSABLE } from '../../ops/diagnose/diagnose.ts';
import { parseTarget } from '../../ops/target.ts';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, DATA_VOLUMES, EVENTS, INSTANCETYPES, PVCS, VM_RESTORES, VM_SNAPSHOTS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachineRestore } from '../../shared/api/snapshot.ts';
import { NS, queueIdle, startSlice, until, vmManifest, type Slice } from './support.ts';

let s: Slice;

before(async () => {
  s = await startSlice({ storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 } });
});
after(async () => {
  await s?.stop();
});
after(() => {
  // on the real lane every controller runs under its own role: a refusal is a gap in the role
  assert.deepEqual(s.problems.filter((p) => /forbidden/i.test(p)), []);
});

/** A VM with a containerDisk and a data disk on claim `<name>-data`. */
async function vmWithClaim(name: string, runStrategy: string): Promise<VirtualMachine> {
  await s.kube.create(PVCS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `${name}-data`, namespace: NS, labels: { app: name } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS },
  });
  const vm = vmManifest(name, { runStrategy } as Partial<VirtualMachine['spec']>);
  vm.metadata = { ...vm.metadata, labels: { app: name } };
  const tmpl = vm.spec.template;
  tmpl.spec!.domain.devices.disks = [...(tmpl.spec!.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
  tmpl.spec!.volumes = [...(tmpl.spec!.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }];
  return s.kube.create(VMS, vm);
}

/** A ready snapshot `snap` of `vm`. */
async function readySnapshot(snap: string, vm: string): Promise<void> {
  await s.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: snap, namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm } } });
  await until(`snapshot ${snap} is ready`, async () => (await s.kube.get(VM_SNAPSHOTS, NS, snap))?.status?.readyToUse === true, { problems: s.problems });
  await until(`${vm} is unlocked`, async () => (await s.kube.get(VMS, NS, vm))?.status?.snapshotInProgress === undefined);
}

async function restoreOf(name: string, snap: string, target: string, spec: Partial<NonNullable<VirtualMachineRestore['spec']>> = {}): Promise<VirtualMachineRestore> {
  return s.kube.create(VM_RESTORES, {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineRestore',
    metadata: { name, namespace: NS },
    spec: { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: target }, virtualMachineSnapshotName: snap, ...spec },
  });
}

const restore = (name: string) => s.kube.get(VM_RESTORES, NS, name);
/** `virt-reconciler diagnose restore/…`, in process. */
const diagnoseRestore = (name: string) => diagnose(parseTarget(`restore/${NS}/${name}`, DIAGNOSABLE), { cluster: readOnly(s.kube), queue: s.rt.queue, state: s.rt.state, now: Date.now() });
const vmOf = async (name: string) => (await s.kube.get(VMS, NS, name)) as VirtualMachine | undefined;
const conditions = (x: VirtualMachineRestore | undefined) => (x?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}`);
const complete = async (name: string) => (await restore(name))?.status?.complete === true;
const claimOf = (vm: VirtualMachine | undefined, volume: string) => vm?.spec.template.spec?.volumes?.find((v) => v.name === volume)?.persistentVolumeClaim?.claimName;
const eventsOf = async (name: string) => ((await s.kube.list(EVENTS, NS, { fieldSelector: `involvedObject.name=${name}` })).items as { type?: string; reason?: string; message?: string }[]).map((e) => `${e.type} ${e.reason} ${e.message}`);

async function running(vm: string): Promise<boolean> {
  const vmi = await s.kube.get(VMIS, NS, vm);
  return vmi?.status?.phase === 'Running' && (vmi.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The VM's spec as the test changes it after the snapshot: more memory, a different label. */
async function changeAfterSnapshot(vm: string): Promise<void> {
  await s.kube.patch(VMS, NS, vm, { type: 'merge', body: { spec: { template: { metadata: { labels: { changed: 'after-snapshot' } }, spec: { domain: { resources: { requests: { memory: '256Mi' } } } } } } } });
}

describe('restore end to end', () => {
  test('into the stopped source VM: the claim replaced by one restored from the VolumeSnapshot, the spec back, restoreInProgress released, the VM starts again', async () => {
    // arrange
    await vmWithClaim('rs-inplace', 'Halted');
    await until('the claim is bound', async () => (await s.kube.get(PVCS, NS, 'rs-inplace-data'))?.status?.phase === 'Bound');
    await readySnapshot('rs-inplace-snap', 'rs-inplace');
    await changeAfterSnapshot('rs-inplace');
    // act
    const r = await restoreOf('rs-inplace-r', 'rs-inplace-snap', 'rs-inplace');
    await until('the restore completes', () => complete('rs-inplace-r'), { problems: s.problems });
    // assert: the restore
    const done = await restore('rs-inplace-r');
    const uid = r.metadata?.uid ?? '';
    assert.deepEqual(conditions(done), ['Progressing=False Operation complete', 'Ready=True Operation complete']);
    assert.ok(done?.status?.restoreTime);
    assert.deepEqual(done?.metadata?.finalizers, ['snapshot.kubevirt.io/vmrestore-protection']);
    const vm = await vmOf('rs-inplace');
    assert.deepEqual(done?.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}/${o.uid}`), [`VirtualMachine/rs-inplace/${vm?.metadata?.uid}`]);
    const snapshot = await s.kube.get(VM_SNAPSHOTS, NS, 'rs-inplace-snap');
    const restoredClaim = `restore-${uid}-data`;
    assert.deepEqual(done?.status?.restores, [{ volumeName: 'data', persistentVolumeClaim: restoredClaim, volumeSnapshotName: `vmsnapshot-${snapshot?.metadata?.uid}-volume-data` }]);
    // the VM: its spec as snapshotted, on the restored claim, annotated, released, still Halted
    assert.equal(claimOf(vm, 'data'), restoredClaim);
    assert.equal(vm?.spec.template.spec?.domain.resources?.requests?.memory, '128Mi');
    assert.equal(vm?.spec.template.metadata?.labels?.changed, undefined);
    assert.equal(vm?.metadata?.annotations?.['restore.kubevirt.io/lastRestoreUID'], `rs-inplace-r-${uid}`);
    assert.equal(vm?.status?.restoreInProgress, undefined);
    assert.equal(vm?.spec.runStrategy, 'Halted');
    assert.ok(vm?.spec.template.spec?.domain.firmware?.uuid, 'the legacy firmware UUID, restored under its own name');
    // the restored claim: from the VolumeSnapshot, owned by the VM, Bound
    const pvc = await s.kube.get(PVCS, NS, restoredClaim);
    assert.deepEqual(pvc?.spec?.dataSource, { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: `vmsnapshot-${snapshot?.metadata?.uid}-volume-data` });
    assert.equal(pvc?.metadata?.labels?.['restore.kubevirt.io/source-vm-name'], 'rs-inplace');
    assert.equal(pvc?.metadata?.labels?.app, 'rs-inplace');
    assert.equal(pvc?.metadata?.ownerReferences?.[0]?.uid, vm?.metadata?.uid);
    await until('the restored claim is bound', async () => (await s.kube.get(PVCS, NS, restoredClaim))?.status?.phase === 'Bound');
    assert.ok(await s.kube.get(PVCS, NS, 'rs-inplace-data'), 'the old claim is left alone (RandomizeNames)');
    assert.ok((await eventsOf('rs-inplace-r')).includes('Normal VirtualMachineRestoreComplete Successfully completed VirtualMachineRestore rs-inplace-r'));
    // and the VM is back: it starts on the restored claim
    await s.kube.patch(VMS, NS, 'rs-inplace', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the restored VM runs', () => running('rs-inplace'), { problems: s.problems });
    const vmi = await s.kube.get(VMIS, NS, 'rs-inplace');
    assert.equal(vmi?.spec.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName, restoredClaim);
  });

  test('into a running VM: waits (WaitGracePeriod) with a condition saying so; once the VM is stopped it goes on and completes', async () => {
    // arrange
    await vmWithClaim('rs-wait', 'Always');
    await until('the VM runs', () => running('rs-wait'), { problems: s.problems });
    await readySnapshot('rs-wait-snap', 'rs-wait');
    // act
    await restoreOf('rs-wait-r', 'rs-wait-snap', 'rs-wait');
    const waiting = 'Waiting for target VM to be powered off. Please stop the restore target to proceed with restore, or the operation will fail after 5m0s';
    await until('the restore waits', async () => conditions(await restore('rs-wait-r')).includes(`Progressing=False ${waiting}`), { problems: s.problems });
    const stillRunning = await running('rs-wait');
    const d = await diagnoseRestore('rs-wait-r');
    await s.kube.patch(VMS, NS, 'rs-wait', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    await until('the restore completes', () => complete('rs-wait-r'), { problems: s.problems });
    // assert
    assert.ok(stillRunning, 'the restore does not stop the VM itself');
    assert.equal(d.verdict, `restore not complete: ${waiting}`, 'the operator is told why');
    assert.match(d.findings[0]?.hint ?? '', /stop the VM default\/rs-wait/);
    assert.ok((await diagnoseRestore('rs-wait-r')).healthy, 'complete: healthy');
    assert.ok((await eventsOf('rs-wait-r')).includes('Warning RestoreTargetNotReady Restore target VMI still exists, please stop the restore target to proceed with restore'));
    assert.deepEqual(conditions(await restore('rs-wait-r')), ['Progressing=False Operation complete', 'Ready=True Operation complete']);
    assert.equal(await s.kube.get(VMIS, NS, 'rs-wait'), undefined);
    assert.equal((await vmOf('rs-wait'))?.spec.runStrategy, 'Halted', 'the run strategy of the VM as it is now');
  });

  test('StopTarget: the restore stops the running VM through virt-api, then restores it', async () => {
    // arrange
    await vmWithClaim('rs-stop', 'Always');
    await until('the VM runs', () => running('rs-stop'), { problems: s.problems });
    await readySnapshot('rs-stop-snap', 'rs-stop');
    // act
    await restoreOf('rs-stop-r', 'rs-stop-snap', 'rs-stop', { targetReadinessPolicy: 'StopTarget' });
    await until('the restore completes', () => complete('rs-stop-r'), { problems: s.problems });
    // assert
    assert.ok(s.sandbox.storage!.virtApi.calls().includes(`PUT ${NS}/rs-stop/stop`), 'stopped through virt-api');
    assert.ok((await eventsOf('rs-stop-r')).includes('Warning RestoreTargetNotReady Automatically stopping restore target for restore operation'));
    assert.equal(await s.kube.get(VMIS, NS, 'rs-stop'), undefined);
    assert.equal((await vmOf('rs-stop'))?.spec.runStrategy, 'Halted');
  });

  test('into a new VM: created Halted from the snapshot, on claims restored for it, with the patches applied; the source untouched', async () => {
    // arrange
    await vmWithClaim('rs-src', 'Halted');
    await until('the claim is bound', async () => (await s.kube.get(PVCS, NS, 'rs-src-data'))?.status?.phase === 'Bound');
    await readySnapshot('rs-src-snap', 'rs-src');
    const source = await vmOf('rs-src');
    // virt-api's VM webhook gave the source its firmware UUID at create; the snapshot takes it.
    const sourceUuid = source?.spec.template.spec?.domain.firmware?.uuid;
    // act
    const r = await restoreOf('rs-new-r', 'rs-src-snap', 'rs-new', { patches: ['{"op":"replace","path":"/metadata/labels/app","value":"rs-new"}'] });
    await until('the restore completes', () => complete('rs-new-r'), { problems: s.problems });
    // assert
    const vm = await vmOf('rs-new');
    const uid = r.metadata?.uid ?? '';
    assert.ok(vm, 'the new VM');
    assert.equal(vm?.spec.runStrategy, 'Halted');
    assert.deepEqual(vm?.metadata?.labels, { app: 'rs-new' });
    assert.equal(claimOf(vm, 'data'), `restore-${uid}-data`);
    assert.ok(sourceUuid);
    assert.equal(vm?.spec.template.spec?.domain.firmware?.uuid, sourceUuid, "the snapshot's UUID, none of its own name (nor the webhook's: the template names one)");
    assert.equal(vm?.status?.restoreInProgress, undefined);
    const pvc = await s.kube.get(PVCS, NS, `restore-${uid}-data`);
    assert.equal(pvc?.metadata?.annotations?.['restore.kubevirt.io/name'], 'rs-new-r');
    assert.deepEqual(conditions(await restore('rs-new-r')), ['Progressing=False Operation complete', 'Ready=True Operation complete']);
    const after = await vmOf('rs-src');
    assert.equal(claimOf(after, 'data'), 'rs-src-data', 'the source VM keeps its claim');
    assert.equal(after?.metadata?.resourceVersion === source?.metadata?.resourceVersion || after?.metadata?.annotations?.['restore.kubevirt.io/lastRestoreUID'] === undefined, true);
    // and it starts
    await s.kube.patch(VMS, NS, 'rs-new', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the new VM runs', () => running('rs-new'), { problems: s.problems });
  });

  test('a VM with a dataVolumeTemplate into a new VM: the template renamed, its DataVolume created pre-populated and adopting the restored claim', async () => {
    // arrange
    const vm = vmManifest('rs-dv', { runStrategy: 'Halted', dataVolumeTemplates: [{ metadata: { name: 'rs-dv-disk' }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } } }] } as Partial<VirtualMachine['spec']>);
    vm.spec.template.spec!.domain.devices.disks = [...(vm.spec.template.spec!.domain.devices.disks ?? []), { name: 'disk', disk: { bus: 'virtio' } }];
    vm.spec.template.spec!.volumes = [...(vm.spec.template.spec!.volumes ?? []), { name: 'disk', dataVolume: { name: 'rs-dv-disk' } }];
    await s.kube.create(VMS, vm);
    await until('the DataVolume succeeded', async () => (await s.kube.get(DATA_VOLUMES, NS, 'rs-dv-disk'))?.status?.phase === 'Succeeded', { problems: s.problems });
    await until('its claim is bound', async () => (await s.kube.get(PVCS, NS, 'rs-dv-disk'))?.status?.phase === 'Bound');
    await readySnapshot('rs-dv-snap', 'rs-dv');
    // act
    const r = await restoreOf('rs-dv-r', 'rs-dv-snap', 'rs-dv-new');
    await until('the restore completes', () => complete('rs-dv-r'), { problems: s.problems });
    // assert
    const restored = `restore-${r.metadata?.uid ?? ''}-disk`;
    const target = await vmOf('rs-dv-new');
    assert.deepEqual(target?.spec.dataVolumeTemplates?.map((t) => t.metadata?.name), [restored]);
    assert.equal(target?.spec.template.spec?.volumes?.find((v) => v.name === 'disk')?.dataVolume?.name, restored);
    assert.deepEqual((await restore('rs-dv-r'))?.status?.restores?.map((e) => e.dataVolumeName), [restored]);
    const dv = await s.kube.get(DATA_VOLUMES, NS, restored);
    assert.equal(dv?.metadata?.annotations?.['cdi.kubevirt.io/storage.prePopulated'], 'true');
    assert.equal(dv?.metadata?.annotations?.['restore.kubevirt.io/name'], 'rs-dv-r');
    await until('CDI adopted the claim', async () => (await s.kube.get(PVCS, NS, restored))?.metadata?.ownerReferences?.some((o) => o.kind === 'DataVolume' && o.name === restored) === true);
    assert.equal((await s.kube.get(PVCS, NS, restored))?.spec?.dataSource?.kind, 'VolumeSnapshot');
    // and it starts on it
    await s.kube.patch(VMS, NS, 'rs-dv-new', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the new VM runs', () => running('rs-dv-new'), { problems: s.problems });
  });

  test('a VM with a dataVolumeTemplate restored in place: the renamed template replaces the old one, whose DataVolume is deleted', async () => {
    // arrange
    const vm = vmManifest('rs-dvip', { runStrategy: 'Halted', dataVolumeTemplates: [{ metadata: { name: 'rs-dvip-disk' }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } } }] } as Partial<VirtualMachine['spec']>);
    vm.spec.template.spec!.domain.devices.disks = [...(vm.spec.template.spec!.domain.devices.disks ?? []), { name: 'disk', disk: { bus: 'virtio' } }];
    vm.spec.template.spec!.volumes = [...(vm.spec.template.spec!.volumes ?? []), { name: 'disk', dataVolume: { name: 'rs-dvip-disk' } }];
    await s.kube.create(VMS, vm);
    await until('the DataVolume succeeded', async () => (await s.kube.get(DATA_VOLUMES, NS, 'rs-dvip-disk'))?.status?.phase === 'Succeeded', { problems: s.problems });
    await until('its claim is bound', async () => (await s.kube.get(PVCS, NS, 'rs-dvip-disk'))?.status?.phase === 'Bound');
    await readySnapshot('rs-dvip-snap', 'rs-dvip');
    // act
    const r = await restoreOf('rs-dvip-r', 'rs-dvip-snap', 'rs-dvip');
    await until('the restore completes', () => complete('rs-dvip-r'), { problems: s.problems });
    // assert
    const restored = `restore-${r.metadata?.uid ?? ''}-disk`;
    const target = await vmOf('rs-dvip');
    assert.deepEqual(target?.spec.dataVolumeTemplates?.map((t) => t.metadata?.name), [restored]);
    assert.deepEqual((await restore('rs-dvip-r'))?.status?.deletedDataVolumes, ['rs-dvip-disk']);
    await until('the old DataVolume is gone', async () => {
      const dv = await s.kube.get(DATA_VOLUMES, NS, 'rs-dvip-disk');
      return dv === undefined || dv.metadata?.deletionTimestamp !== undefined;
    });
    await s.kube.patch(VMS, NS, 'rs-dvip', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the VM runs on the restored DataVolume', () => running('rs-dvip'), { problems: s.problems });
    assert.equal((await s.kube.get(VMIS, NS, 'rs-dvip'))?.spec.volumes?.find((v) => v.name === 'disk')?.dataVolume?.name, restored);
  });

  test('InPlace with a dataVolumeTemplate: the DataVolume kept and marked pre-populated, its claim deleted and restored under its own name', async () => {
    // arrange
    const vm = vmManifest('rs-inpl', { runStrategy: 'Halted', dataVolumeTemplates: [{ metadata: { name: 'rs-inpl-disk' }, spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS } } }] } as Partial<VirtualMachine['spec']>);
    vm.spec.template.spec!.domain.devices.disks = [...(vm.spec.template.spec!.domain.devices.disks ?? []), { name: 'disk', disk: { bus: 'virtio' } }];
    vm.spec.template.spec!.volumes = [...(vm.spec.template.spec!.volumes ?? []), { name: 'disk', dataVolume: { name: 'rs-inpl-disk' } }];
    await s.kube.create(VMS, vm);
    await until('the DataVolume succeeded', async () => (await s.kube.get(DATA_VOLUMES, NS, 'rs-inpl-disk'))?.status?.phase === 'Succeeded', { problems: s.problems });
    await until('its claim is bound', async () => (await s.kube.get(PVCS, NS, 'rs-inpl-disk'))?.status?.phase === 'Bound');
    const before = await s.kube.get(PVCS, NS, 'rs-inpl-disk');
    await readySnapshot('rs-inpl-snap', 'rs-inpl');
    // act
    await restoreOf('rs-inpl-r', 'rs-inpl-snap', 'rs-inpl', { volumeRestorePolicy: 'InPlace' });
    await until('the restore completes', () => complete('rs-inpl-r'), { problems: s.problems });
    // assert
    const pvc = await s.kube.get(PVCS, NS, 'rs-inpl-disk');
    assert.notEqual(pvc?.metadata?.uid, before?.metadata?.uid, 'a new claim under the old name');
    assert.equal(pvc?.spec?.dataSource?.kind, 'VolumeSnapshot');
    assert.deepEqual((await restore('rs-inpl-r'))?.status?.restores?.map((e) => [e.persistentVolumeClaim, e.dataVolumeName]), [['rs-inpl-disk', 'rs-inpl-disk']]);
    const dv = await s.kube.get(DATA_VOLUMES, NS, 'rs-inpl-disk');
    assert.equal(dv?.metadata?.annotations?.['restore.kubevirt.io/name'], 'rs-inpl-r');
    assert.deepEqual((await vmOf('rs-inpl'))?.spec.dataVolumeTemplates?.map((t) => t.metadata?.name), ['rs-inpl-disk']);
    await s.kube.patch(VMS, NS, 'rs-inpl', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the VM runs', () => running('rs-inpl'), { problems: s.problems });
  });

  test('a VM with a persistent TPM restored in place: its backend claim restored too, the old one deleted; it runs on the restored one', async () => {
    // arrange: the VMI controller made the backend claim when the VM first ran
    const vm = vmManifest('rs-tpm', { runStrategy: 'Always' });
    vm.spec.template.spec!.domain.devices.tpm = { persistent: true } as never;
    await s.kube.create(VMS, vm);
    await until('the VM runs', () => running('rs-tpm'), { problems: s.problems });
    const backend = async () => (await s.kube.list(PVCS, NS, { labelSelector: 'persistent-state-for=rs-tpm' })).items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? '');
    const [original] = await backend();
    await s.kube.patch(VMS, NS, 'rs-tpm', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    await until('the VM stopped', async () => (await s.kube.get(VMIS, NS, 'rs-tpm')) === undefined, { problems: s.problems });
    await readySnapshot('rs-tpm-snap', 'rs-tpm');
    // act
    const r = await restoreOf('rs-tpm-r', 'rs-tpm-snap', 'rs-tpm');
    await until('the restore completes', () => complete('rs-tpm-r'), { problems: s.problems });
    await s.kube.patch(VMS, NS, 'rs-tpm', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('the VM runs again', () => running('rs-tpm'), { problems: s.problems });
    // assert
    const restored = `restore-${r.metadata?.uid ?? ''}-persistent-state-for-rs-tpm`;
    assert.ok(original);
    assert.deepEqual(await backend(), [restored], 'exactly the restored backend claim');
    await until('the original backend claim is gone', async () => (await s.kube.get(PVCS, NS, original ?? ''))?.metadata?.deletionTimestamp !== undefined || (await s.kube.get(PVCS, NS, original ?? '')) === undefined);
    const vmi = await s.kube.get(VMIS, NS, 'rs-tpm');
    assert.equal(vmi?.status?.volumeStatus?.find((v) => v.name === 'persistent-state-for-this-vm')?.persistentVolumeClaimInfo?.claimName, restored);
  });

  test('a VM pinned to an instance type revision into a new VM: the snapshot keeps a copy of the revision, the restore copies it back under the new VM, which owns it', async () => {
    // arrange: a namespaced instance type, a VM whose spec pins the revision the VM controller made (as an older KubeVirt wrote it)
    await s.kube.create(INSTANCETYPES, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'small-it', namespace: NS }, spec: { cpu: { guest: 1 }, memory: { guest: '64Mi' } } } as never);
    await vmWithClaim('itr-src', 'Halted');
    await until('the claim is bound', async () => (await s.kube.get(PVCS, NS, 'itr-src-data'))?.status?.phase === 'Bound');
    // a merge patch, not an update: the VM controller writes the VM meanwhile
    await s.kube.patch(VMS, NS, 'itr-src', { type: 'merge', body: { spec: { instancetype: { name: 'small-it', kind: 'VirtualMachineInstancetype' }, template: { spec: { domain: { resources: null } } } } } });
    let rev = '';
    await until('the instance type revision', async () => (rev = (await vmOf('itr-src'))?.status?.instancetypeRef?.controllerRevisionRef?.name ?? '') !== '', { problems: s.problems });
    await s.kube.patch(VMS, NS, 'itr-src', { type: 'merge', body: { spec: { instancetype: { revisionName: rev } } } });
    // act
    await readySnapshot('itr-snap', 'itr-src');
    await restoreOf('itr-r', 'itr-snap', 'itr-new');
    await until('the restore completes', () => complete('itr-r'), { problems: s.problems });
    // assert
    const snapshotCopy = await s.kube.get(CONTROLLER_REVISIONS, NS, rev.replace('itr-src', 'itr-snap'));
    const snapshot = await s.kube.get(VM_SNAPSHOTS, NS, 'itr-snap');
    assert.equal(snapshotCopy?.metadata?.ownerReferences?.[0]?.uid, snapshot?.metadata?.uid, 'the snapshot owns its copy');
    const target = await vmOf('itr-new');
    const restored = rev.replace('itr-src', 'itr-new');
    assert.equal(target?.spec.instancetype?.revisionName, restored);
    const copy = await s.kube.get(CONTROLLER_REVISIONS, NS, restored);
    assert.deepEqual(copy?.data, snapshotCopy?.data);
    assert.equal(copy?.metadata?.labels?.['instancetype.kubevirt.io/object-name'], 'small-it');
    assert.deepEqual(copy?.metadata?.ownerReferences?.map((r) => `${r.kind}/${r.name} ${r.uid === target?.metadata?.uid} ${r.controller}`), ['VirtualMachine/itr-new true true']);
  });

  test('a restore of a snapshot that does not exist: a clear condition and Event, not retried; it goes on once the snapshot is there and ready', async () => {
    // arrange
    await vmWithClaim('rs-late', 'Halted');
    // act
    await restoreOf('rs-late-r', 'rs-late-snap', 'rs-late');
    const missing = `VMSnapshot ${NS}/rs-late-snap does not exist`;
    await until('the condition says so', async () => conditions(await restore('rs-late-r')).includes(`Ready=False ${missing}`), { problems: s.problems });
    await until('the queue is idle', () => queueIdle(s, ['restore']));
    const events = await eventsOf('rs-late-r');
    await readySnapshot('rs-late-snap', 'rs-late');
    await until('the restore completes', () => complete('rs-late-r'), { problems: s.problems });
    // assert
    assert.ok(events.includes(`Warning VirtualMachineRestoreError VirtualMachineRestore encountered error ${missing}`), events.join('\n'));
  });
});
