/**
 * The backup controller end to end: the sandbox cluster with its storage agents (the PV
 * provisioner binds claims; virt-handler's backup side enables CBT on the VMIs the KubeVirt CR
 * selects, attaches and detaches utility volumes and runs a started backup asynchronously; the
 * sandbox's virt-api serves the `backup` subresource) ← relay → SQLite queue → backup, VM and VMI
 * functions (LocalRuntime). A user's steps: a running VM with changed block tracking (and the sandbox's guest agent), a tracker,
 * a backup through it to completion, an incremental one after it, and one deleted mid-way; and a VM
 * selected by its namespace's labels (the namespace selector), labelled while the VM runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineBackup, VirtualMachineBackupTracker } from '../../shared/api/backup.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { EVENTS, KUBEVIRTS, NAMESPACES, PODS, PVCS, VM_BACKUP_TRACKERS, VM_BACKUPS, VMIS, VMS } from '../../shared/api/resources.ts';
import { REAL } from '../support/lanes.ts';
import { NS, startSlice, until, vmManifest, type Slice } from './support.ts';

let s: Slice;
const VM = 'e2e-backup-vm';
const TRACKER = 'e2e-tracker';

const claim = (name: string): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'sandbox-csi' },
});
async function boundClaim(name: string): Promise<void> {
  await s.kube.create(PVCS, claim(name));
  await until(`claim ${name} Bound`, async () => (await s.kube.get(PVCS, NS, name))?.status?.phase === 'Bound', { tries: 3000, problems: s.problems });
}
const backupOf = (name: string): VirtualMachineBackup => ({
  apiVersion: 'backup.kubevirt.io/v1alpha1',
  kind: 'VirtualMachineBackup',
  metadata: { name, namespace: NS },
  spec: { source: { apiGroup: 'backup.kubevirt.io', kind: 'VirtualMachineBackupTracker', name: TRACKER }, pvcName: `${name}-target` },
});
const cond = (b: VirtualMachineBackup | undefined, type: string) => b?.status?.conditions?.find((c) => c.type === type);
const getVmi = async () => (await s.kube.get(VMIS, NS, VM)) as (VirtualMachineInstance & { spec: { utilityVolumes?: unknown[] } }) | undefined;
async function eventsOf(name: string): Promise<string[]> {
  const list = (await s.kube.list(EVENTS, NS)) as { items: { involvedObject?: { kind?: string; name?: string }; type?: string; reason?: string; message?: string }[] };
  return list.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineBackup' && e.involvedObject.name === name).map((e) => `${e.type} ${e.reason}: ${e.message}`);
}
/** The VMI carries no trace of a backup: no utility volume in spec or status, no backupStatus. */
async function vmiClean(): Promise<boolean> {
  const vmi = await getVmi();
  return (vmi?.spec.utilityVolumes ?? []).length === 0 && !(vmi?.status?.volumeStatus ?? []).some((v) => v.name.endsWith('-backup-target-pvc')) && vmi?.status?.changedBlockTracking?.backupStatus === undefined;
}

before(async () => {
  // Each backup step (progress, completion, attach) takes 1.5 s: long enough to delete one mid-way.
  s = await startSlice({ start: false, timings: { podStartupMs: 30, vmiBootMs: 30, vmiShutdownMs: 30 }, storage: { bindVolumes: !REAL, provisionMs: 50, backupStepMs: 1500 } });
  // Changed block tracking for the VMs labelled backup=yes (virt-operator's configuration), behind
  // the IncrementalBackup gate: the VM controller creates their VMIs Initializing, virt-handler enables it.
  await s.kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration: { developerConfiguration: { featureGates: ['IncrementalBackup'] }, changedBlockTrackingLabelSelectors: { virtualMachineLabelSelector: { matchLabels: { backup: 'yes' } }, namespaceLabelSelector: { matchLabels: { 'cbt-ns': 'on' } } } } } } });
  // Before the runtime starts: the controllers' cached cluster config reads it on first use.
  s.rt.start();
  await boundClaim(`${VM}-disk`);
  const vm = vmManifest(VM, { runStrategy: 'Always' });
  // The selector matches the VM's own labels (KubeVirt's vmMatchesVMSelector).
  vm.metadata = { ...vm.metadata, labels: { ...vm.metadata?.labels, backup: 'yes' } };
  vm.spec.template!.spec!.domain.devices.disks = [{ name: 'disk', disk: { bus: 'virtio' } }];
  vm.spec.template!.spec!.volumes = [{ name: 'disk', persistentVolumeClaim: { claimName: `${VM}-disk` } }];
  await s.kube.create(VMS, vm);
  await until('the VMI Running with CBT Enabled', async () => {
    const vmi = await getVmi();
    return vmi?.status?.phase === 'Running' && vmi.status.changedBlockTracking?.state === 'Enabled';
  }, { tries: 4000, problems: s.problems });
  await s.kube.create(VM_BACKUP_TRACKERS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: TRACKER, namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: VM } } });
});
after(async () => {
  await s?.stop();
});

describe('backup end to end (relay → queue → backup function → sandbox virt-handler and virt-api)', () => {
  test('a backup through its tracker to completion: target hotplugged and released, checkpoint on the tracker; the next one is incremental', async () => {
    // arrange
    await boundClaim('e2e-full-target');
    // act
    await s.kube.create(VM_BACKUPS, backupOf('e2e-full'));
    await until('the backup Complete', async () => cond(await s.kube.get(VM_BACKUPS, NS, 'e2e-full'), 'Complete')?.status === 'True', { tries: 6000, problems: s.problems });
    // assert
    const b = (await s.kube.get(VM_BACKUPS, NS, 'e2e-full'))!;
    assert.equal(b.status?.type, 'Full');
    assert.deepEqual(b.metadata?.finalizers, ['backup.kubevirt.io/vmbackup-protection']);
    assert.deepEqual(b.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}`), ['Progressing=False Completed', 'Quiesced=True QuiesceSucceeded', 'Complete=True Completed']);
    assert.deepEqual(b.status?.includedVolumes, [{ volumeName: 'disk' }]);
    assert.equal(b.status?.checkpointName, 'e2e-full');
    const tracker = (await s.kube.get(VM_BACKUP_TRACKERS, NS, TRACKER)) as VirtualMachineBackupTracker;
    assert.equal(tracker.status?.latestCheckpoint?.name, 'e2e-full');
    assert.deepEqual(tracker.status?.latestCheckpoint?.volumes, [{ volumeName: 'disk' }]);
    // virt-handler detaches the utility volume after the controller released it: a moment later.
    await until('utility volume detached and backupStatus cleared', vmiClean, { tries: 3000, problems: s.problems });
    assert.ok((await eventsOf('e2e-full')).includes('Normal VirtualMachineBackupCompletedSuccessfully: Successfully completed VirtualMachineBackup'));
    // act: the next backup through the tracker
    await boundClaim('e2e-incr-target');
    await s.kube.create(VM_BACKUPS, backupOf('e2e-incr'));
    await until('the incremental backup Complete', async () => cond(await s.kube.get(VM_BACKUPS, NS, 'e2e-incr'), 'Complete')?.status === 'True', { tries: 6000, problems: s.problems });
    // assert
    assert.equal((await s.kube.get(VM_BACKUPS, NS, 'e2e-incr'))?.status?.type, 'Incremental');
    assert.equal(((await s.kube.get(VM_BACKUP_TRACKERS, NS, TRACKER)) as VirtualMachineBackupTracker).status?.latestCheckpoint?.name, 'e2e-incr');
  });

  test('a backup deleted mid-way is aborted: Aborting, Failed, the VMI cleaned up, then the backup is gone', async () => {
    // arrange
    await boundClaim('e2e-abort-target');
    await s.kube.create(VM_BACKUPS, backupOf('e2e-abort'));
    await until('the backup running', async () => cond(await s.kube.get(VM_BACKUPS, NS, 'e2e-abort'), 'Progressing')?.reason === 'Initiated', { tries: 6000, problems: s.problems });
    // act
    await s.kube.delete(VM_BACKUPS, NS, 'e2e-abort');
    // assert
    await until('the backup gone', async () => (await s.kube.get(VM_BACKUPS, NS, 'e2e-abort')) === undefined, { tries: 6000, problems: s.problems });
    const events = await eventsOf('e2e-abort');
    assert.ok(events.includes('Warning VirtualMachineBackupAborting: Backup is aborting'), events.join('\n'));
    assert.ok(events.includes('Warning VirtualMachineBackupFailed: backup was aborted'), events.join('\n'));
    // virt-handler detaches the utility volume after the controller released it: a moment later.
    await until('utility volume detached and backupStatus cleared', vmiClean, { tries: 3000, problems: s.problems });
    assert.equal(((await s.kube.get(VM_BACKUP_TRACKERS, NS, TRACKER)) as VirtualMachineBackupTracker).status?.latestCheckpoint?.name, 'e2e-incr', 'an aborted backup leaves the checkpoint alone');
  });

  test('a namespace labelled for CBT while its VM runs: PendingRestart, then the restarted VMI Initializing → Enabled with the cbt mount', async () => {
    // arrange: an unselected VM in a namespace not (yet) labelled
    const ns = 'cbt-ns';
    await s.kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await s.kube.create(PVCS, { ...claim('nsvm-disk'), metadata: { name: 'nsvm-disk', namespace: ns } });
    await until('claim Bound', async () => (await s.kube.get(PVCS, ns, 'nsvm-disk'))?.status?.phase === 'Bound', { tries: 3000, problems: s.problems });
    const vm = vmManifest('nsvm', { runStrategy: 'Always' });
    vm.metadata = { ...vm.metadata, namespace: ns };
    vm.spec.template!.spec!.domain.devices.disks = [{ name: 'disk', disk: { bus: 'virtio' } }];
    vm.spec.template!.spec!.volumes = [{ name: 'disk', persistentVolumeClaim: { claimName: 'nsvm-disk' } }];
    await s.kube.create(VMS, vm);
    await until('the VMI Running', async () => (await s.kube.get(VMIS, ns, 'nsvm'))?.status?.phase === 'Running', { tries: 4000, problems: s.problems });
    assert.equal((await s.kube.get(VMIS, ns, 'nsvm'))?.status?.changedBlockTracking, undefined, 'not selected yet');
    const first = (await s.kube.get(VMIS, ns, 'nsvm'))?.metadata?.uid;
    // act: the namespace gets the selected label (the relay wakes its VMs)
    await s.kube.patch(NAMESPACES, undefined, ns, { type: 'merge', body: { metadata: { labels: { 'cbt-ns': 'on' } } } });
    // assert
    await until('the VM PendingRestart', async () => (await s.kube.get(VMS, ns, 'nsvm'))?.status?.changedBlockTracking?.state === 'PendingRestart', { tries: 4000, problems: s.problems });
    // act: a restart
    await s.kube.delete(VMIS, ns, 'nsvm');
    // assert: the new VMI starts Initializing, virt-handler enables it, the VM mirrors it
    await until('a new VMI with CBT Enabled', async () => {
      const v = await s.kube.get(VMIS, ns, 'nsvm');
      return v?.metadata?.uid !== first && v?.status?.phase === 'Running' && v.status.changedBlockTracking?.state === 'Enabled';
    }, { tries: 4000, problems: s.problems });
    await until('the VM Enabled', async () => (await s.kube.get(VMS, ns, 'nsvm'))?.status?.changedBlockTracking?.state === 'Enabled', { tries: 4000, problems: s.problems });
    const uid = (await s.kube.get(VMIS, ns, 'nsvm'))?.metadata?.uid;
    const launcher = (await s.kube.list(PODS, ns, { labelSelector: `kubevirt.io/created-by=${uid}` })).items[0];
    const mount = launcher?.spec?.containers.find((c) => c.name === 'compute')?.volumeMounts?.find((m) => m.subPath === 'cbt');
    assert.deepEqual([mount?.name, mount?.mountPath], ['vm-state', '/var/run/kubevirt-private/libvirt/qemu/cbt'], 'the cbt overlays on the backend volume (non-root path)');
  });
});
