/**
 * The storage controllers under chaos (rig.ts): a snapshot restored, a VM cloned, a claim
 * exported, a backup taken, volumes hotplugged — each checked at every audit-log instant
 * (audit-invariants.ts): done exactly once, one helper pod at a time, no orphaned temporary object.
 */
import type { VirtualMachine } from '../../shared/api/index.ts';
import { KUBEVIRTS, PODS, PVCS, VM_BACKUP_TRACKERS, VM_BACKUPS, VM_CLONES, VM_EXPORTS, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { REAL } from '../support/lanes.ts';
import { virtApiClient } from '../support/virt-api-client.ts';
import { USER_IDENTITY } from '../bench/support/vmi-run.ts';
import { vmiManifest, vmManifest } from '../e2e/support.ts';
import { creates, createdMoreThanOnce, overLimit } from './audit-invariants.ts';
import { transientAnswer } from './injectors.ts';
import { claim, NS, reach, vmWithClaim, within, type Scenario } from './scenario-support.ts';

export const snapshotRestore: Scenario = {
  name: 'snapshot-restore',
  controllers: ['snapshot', 'restore', 'vm', 'vmi'],
  sandbox: { storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 } },
  async run(rig, say) {
    const out: string[] = [];
    const { user } = rig;
    await vmWithClaim(user, 'chaos-snap-vm', 'Halted');
    await reach(out, 'the claim Bound', async () => (await user.get(PVCS, NS, 'chaos-snap-vm-data'))?.status?.phase === 'Bound');
    await user.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: 'chaos-snap', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'chaos-snap-vm' } } });
    if (!(await reach(out, 'the snapshot readyToUse', async () => (await user.get(VM_SNAPSHOTS, NS, 'chaos-snap'))?.status?.readyToUse === true))) return { checked: 'snapshot', violations: out };
    say('snapshot ready; restoring under chaos');
    await user.create(VM_RESTORES, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineRestore', metadata: { name: 'chaos-restore', namespace: NS }, spec: { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'chaos-snap-vm' }, virtualMachineSnapshotName: 'chaos-snap' } });
    await reach(out, 'the restore complete', async () => (await user.get(VM_RESTORES, NS, 'chaos-restore'))?.status?.complete === true, 180_000);
    await reach(out, 'the VM unlocked', async () => (await user.get(VMS, NS, 'chaos-snap-vm'))?.status?.restoreInProgress === undefined);
    const audit = rig.sandbox.apiServer.audit.query();
    const contents = creates(audit, 'virtualmachinesnapshotcontents');
    const snapshots = creates(audit, 'volumesnapshots');
    const restored = creates(audit, 'persistentvolumeclaims', (n) => n.startsWith('restore-'));
    if (contents !== 1) out.push(`${contents} snapshot contents created, not 1`);
    if (snapshots !== 1) out.push(`${snapshots} VolumeSnapshots created for one volume, not 1`);
    if (restored !== 1) out.push(`${restored} restored claims created for one volume, not 1`);
    out.push(...createdMoreThanOnce(audit, 'virtualmachinesnapshots').map((x) => `snapshot created again: ${x}`));
    // No orphan: every VolumeSnapshot belongs to the one content, every restore- claim is the VM's.
    const vm = await user.get(VMS, NS, 'chaos-snap-vm');
    const used = new Set((vm?.spec.template.spec?.volumes ?? []).map((v) => v.persistentVolumeClaim?.claimName));
    const orphans = (await user.list(PVCS, NS)).items.filter((c) => c.metadata?.name?.startsWith('restore-') && !used.has(c.metadata.name));
    if (orphans.length) out.push(`orphaned restore claims: ${orphans.map((c) => c.metadata?.name).join(', ')}`);
    if ((await user.list(VM_SNAPSHOT_CONTENTS, NS)).items.length !== 1) out.push('not exactly one snapshot content at the end');
    return { checked: 'snapshot → restore of a 1-volume VM: one content, one VolumeSnapshot, one restored claim, restore complete once, no orphan', violations: out };
  },
};

export const clone: Scenario = {
  name: 'clone',
  controllers: ['clone', 'snapshot', 'restore', 'vm', 'vmi'],
  sandbox: { storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 } },
  async run(rig) {
    const out: string[] = [];
    const { user } = rig;
    await vmWithClaim(user, 'chaos-clone-src', 'Halted');
    await reach(out, 'the source claim Bound', async () => (await user.get(PVCS, NS, 'chaos-clone-src-data'))?.status?.phase === 'Bound');
    const c = await user.create(VM_CLONES, {
      apiVersion: 'clone.kubevirt.io/v1beta1',
      kind: 'VirtualMachineClone',
      metadata: { name: 'chaos-clone', namespace: NS },
      spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'chaos-clone-src' }, target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'chaos-clone-dst' } },
    });
    const uid = c.metadata?.uid ?? '';
    // Where it stuck: the clone, its temporary snapshot and restore, both VMs, the contents, the dead letters.
    const whereStuck = async () => {
      const brief = (o: { status?: unknown } | undefined) => (o ? JSON.stringify(o.status ?? {}).slice(0, 600) : 'absent');
      out.push(`  clone: ${brief(await user.get(VM_CLONES, NS, 'chaos-clone'))}`);
      out.push(`  tmp-snapshot: ${brief(await user.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`))}`);
      out.push(`  tmp-restore: ${brief(await user.get(VM_RESTORES, NS, `tmp-restore-${uid}`))}`);
      out.push(`  target VM: ${brief(await user.get(VMS, NS, 'chaos-clone-dst'))}`);
      out.push(`  source VM: ${brief(await user.get(VMS, NS, 'chaos-clone-src'))}`);
      out.push(`  snapshot contents: ${(await user.list(VM_SNAPSHOT_CONTENTS, NS)).items.map((c) => `${c.metadata?.name} ${brief(c)}`).join('; ') || 'none'}`);
      out.push(`  dead letters: ${JSON.stringify(await rig.store.queue.listDeadLetters()).slice(0, 600)}`);
    };
    if (!(await reach(out, 'the clone Succeeded', async () => (await user.get(VM_CLONES, NS, 'chaos-clone'))?.status?.phase === 'Succeeded', 180_000))) await whereStuck();
    else if (!(await reach(out, 'the temporary snapshot and restore gone', async () => (await user.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`)) === undefined && (await user.get(VM_RESTORES, NS, `tmp-restore-${uid}`)) === undefined))) await whereStuck();
    const audit = rig.sandbox.apiServer.audit.query();
    const targets = creates(audit, 'virtualmachines', (n) => n === 'chaos-clone-dst');
    if (targets !== 1) out.push(`the target VM was created ${targets} times`);
    for (const [resource, name] of [['virtualmachinesnapshots', `tmp-snapshot-${uid}`], ['virtualmachinerestores', `tmp-restore-${uid}`]] as const) {
      const n = creates(audit, resource, (x) => x === name);
      if (n !== 1) out.push(`${name} created ${n} times`);
    }
    // The temporary snapshot's content goes after the snapshot: KubeVirt's snapshot controller deletes
    // it, then drops the snapshot's finalizer; the content's own finalizer holds it until its
    // volume snapshots are gone. So it is waited for, not counted the instant the snapshot went.
    const contentsGone = async () => (await user.list(VM_SNAPSHOT_CONTENTS, NS)).items.length === 0;
    if (!(await within(60_000, contentsGone))) {
      const left = (await user.list(VM_SNAPSHOT_CONTENTS, NS)).items;
      out.push(`${left.length} snapshot contents left behind by the clone: ${left.map((c) => `${c.metadata?.name} deleting=${c.metadata?.deletionTimestamp ?? 'no'} finalizers=${(c.metadata?.finalizers ?? []).join(',') || 'none'} status=${JSON.stringify(c.status ?? {}).slice(0, 300)}`).join('; ')}`);
    }
    return { checked: 'a VM cloned: one target VM, one temporary snapshot and restore (each created once, both gone), the clone Succeeded', violations: out };
  },
};

export const exportScenario: Scenario = {
  name: 'export',
  controllers: ['export', 'vm', 'vmi'],
  sandbox: { storage: { bindVolumes: !REAL, provisionMs: 50, snapshotCreateMs: 50, snapshotReadyMs: 50 } },
  async run(rig) {
    const out: string[] = [];
    const { user } = rig;
    await user.create(PVCS, { ...claim('chaos-export-disk'), metadata: { name: 'chaos-export-disk', namespace: NS, annotations: { 'cdi.kubevirt.io/storage.contentType': 'kubevirt' } }, spec: { ...claim('x').spec, storageClassName: 'sandbox-csi' } });
    await reach(out, 'the claim Bound', async () => (await user.get(PVCS, NS, 'chaos-export-disk'))?.status?.phase === 'Bound');
    await user.create(VM_EXPORTS, { apiVersion: 'export.kubevirt.io/v1', kind: 'VirtualMachineExport', metadata: { name: 'chaos-export', namespace: NS }, spec: { source: { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'chaos-export-disk' } } });
    await reach(out, 'the export Ready', async () => (await user.get(VM_EXPORTS, NS, 'chaos-export'))?.status?.phase === 'Ready', 180_000);
    const audit = rig.sandbox.apiServer.audit.query();
    const pods = creates(audit, 'pods', (n) => n === 'virt-export-chaos-export');
    if (pods !== 1) out.push(`the exporter pod was created ${pods} times`);
    out.push(...overLimit(audit, 'pods', (o) => (o.metadata?.name?.startsWith('virt-export-') ? 'chaos-export' : undefined)).map((x) => `two exporter pods: ${x}`));
    return { checked: 'a claim exported: one exporter pod at every instant, created once, the export Ready', violations: out };
  },
};

const BACKUP_VM = 'chaos-backup-vm';
export const backup: Scenario = {
  name: 'backup',
  controllers: ['backup', 'vm', 'vmi'],
  sandbox: { storage: { bindVolumes: !REAL, provisionMs: 50, backupStepMs: 300 } },
  async prepare(user) {
    await user.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration: { developerConfiguration: { featureGates: ['IncrementalBackup'] }, changedBlockTrackingLabelSelectors: { virtualMachineLabelSelector: { matchLabels: { backup: 'yes' } } } } } } });
  },
  async run(rig) {
    const out: string[] = [];
    const { user } = rig;
    const csi = (name: string) => ({ ...claim(name), spec: { ...claim(name).spec, storageClassName: 'sandbox-csi' } });
    await user.create(PVCS, csi(`${BACKUP_VM}-disk`));
    await user.create(PVCS, csi('chaos-backup-target'));
    const vm = vmManifest(BACKUP_VM, { runStrategy: 'Always' });
    vm.metadata = { ...vm.metadata, labels: { backup: 'yes' } };
    vm.spec.template.spec!.domain.devices.disks = [{ name: 'disk', disk: { bus: 'virtio' } }];
    vm.spec.template.spec!.volumes = [{ name: 'disk', persistentVolumeClaim: { claimName: `${BACKUP_VM}-disk` } }];
    await user.create(VMS, vm);
    const cbt = async () => {
      const v = await user.get(VMIS, NS, BACKUP_VM);
      return v?.status?.phase === 'Running' && v.status.changedBlockTracking?.state === 'Enabled';
    };
    if (!(await reach(out, 'the VMI Running with CBT', cbt, 180_000))) return { checked: 'backup', violations: out };
    await user.create(VM_BACKUP_TRACKERS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: 'chaos-tracker', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: BACKUP_VM } } });
    await user.create(VM_BACKUPS, { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackup', metadata: { name: 'chaos-backup', namespace: NS }, spec: { source: { apiGroup: 'backup.kubevirt.io', kind: 'VirtualMachineBackupTracker', name: 'chaos-tracker' }, pvcName: 'chaos-backup-target' } });
    const complete = async () => (await user.get(VM_BACKUPS, NS, 'chaos-backup'))?.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') === true;
    if (!(await reach(out, 'the backup Complete', complete, 180_000))) {
      const b = await user.get(VM_BACKUPS, NS, 'chaos-backup');
      const v = await user.get(VMIS, NS, BACKUP_VM);
      out.push(`backup conditions ${JSON.stringify(b?.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`))}; VMI volumes ${JSON.stringify(v?.status?.volumeStatus?.map((x) => `${x.name} ${x.phase}`))}, backupStatus ${JSON.stringify(v?.status?.changedBlockTracking)}`);
    }
    await reach(out, 'the VMI without its backup volume', async () => {
      const v = (await user.get(VMIS, NS, BACKUP_VM)) as { spec: { utilityVolumes?: unknown[] } } | undefined;
      return (v?.spec.utilityVolumes ?? []).length === 0;
    });
    const audit = rig.sandbox.apiServer.audit.query();
    // The target is attached once: one write adds the utility volume.
    let attached = 0;
    let had = false;
    for (const e of audit.filter((x) => x.resource === 'virtualmachineinstances' && x.name === BACKUP_VM)) {
      const has = ((e.object as { spec?: { utilityVolumes?: unknown[] } }).spec?.utilityVolumes ?? []).length > 0;
      if (has && !had) attached++;
      had = has;
    }
    if (attached !== 1) out.push(`the backup target was attached ${attached} times`);
    const vmis = creates(audit, 'virtualmachineinstances', (n) => n === BACKUP_VM);
    if (vmis !== 1) out.push(`${vmis} VMIs created for one VM start`);
    return { checked: 'a backup through its tracker: Complete, its target attached once and released, one VMI', violations: out };
  },
};

const HP = 'chaos-hp';

/**
 * Hot-plugs `vol` into the VMI exactly once, as virt-api would, through the chaos's faults. The JSON
 * patch appends, so it is not idempotent: after a network error (a restarted kube-apiserver resets
 * the connection) the patch may or may not have landed, and the VMI is read before trying again.
 */
async function addVolumeOnce(user: KubeClient, virtApi: KubeClient, vol: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const vmi = await user.get(VMIS, NS, HP);
    if ((vmi?.spec.volumes ?? []).some((v) => v.name === vol)) return;
    try {
      await virtApi.patch(VMIS, NS, HP, {
        type: 'json',
        ops: [
          { op: 'add', path: '/spec/volumes/-', value: { name: vol, persistentVolumeClaim: { claimName: `chaos-hp-${vol.slice(-1)}`, hotpluggable: true } } },
          { op: 'add', path: '/spec/domain/devices/disks/-', value: { name: vol, disk: { bus: 'scsi' } } },
        ],
      });
      return;
    } catch (err) {
      if (!transientAnswer(err) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
export const hotplug: Scenario = {
  name: 'hotplug',
  controllers: ['vmi'],
  sandbox: { storage: { provisionMs: 100 }, timings: { vmiHotplugMs: 50 } },
  async run(rig, say) {
    const out: string[] = [];
    const { user } = rig;
    for (const c of ['chaos-hp-a', 'chaos-hp-b']) await user.create(PVCS, claim(c));
    await user.create(VMIS, vmiManifest(HP));
    if (!(await reach(out, 'the VMI Running', async () => (await user.get(VMIS, NS, HP))?.status?.phase === 'Running'))) return { checked: 'hotplug', violations: out };
    const ready = (names: string[]) => async () => {
      const st = ((await user.get(VMIS, NS, HP))?.status?.volumeStatus ?? []).filter((s) => s.hotplugVolume !== undefined);
      return st.length === names.length && st.every((s) => s.phase === 'Ready' && names.includes(s.name));
    };
    // virt-api's addvolume: the spec patch as virt-api's account (a user's is refused).
    const virtApi = virtApiClient(rig.sandbox.apiServer.kubeConfig(USER_IDENTITY));
    for (const [i, vol] of ['disk-a', 'disk-b'].entries()) {
      await addVolumeOnce(user, virtApi, vol);
      await reach(out, `${i + 1} volume(s) Ready`, ready(['disk-a', 'disk-b'].slice(0, i + 1)), 180_000);
      say(`hotplug: ${vol} Ready`);
    }
    const audit = rig.sandbox.apiServer.audit.query();
    // One attachment pod per set of volumes at every instant (a new set replaces the pod).
    const claimsOf = (o: unknown) => ((o as { spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } }).spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : [])).sort().join(',');
    out.push(...overLimit(audit, 'pods', (o) => (o.metadata?.labels?.['kubevirt.io'] === 'hotplug-disk' ? claimsOf(o) : undefined)).map((x) => `two attachment pods: ${x}`));
    const live = (await user.list(PODS, NS, { labelSelector: 'kubevirt.io=hotplug-disk' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    if (live.length !== 1) out.push(`${live.length} live attachment pods at the end, not 1`);
    return { checked: 'two volumes hotplugged one after the other: one attachment pod per volume set at every instant, one at the end', violations: out };
  },
};
