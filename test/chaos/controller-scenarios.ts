/**
 * Every controller under chaos (rig.ts): what a user does with each — a pool rolled out, VMs
 * started and stopped, a snapshot restored, a VM cloned, a claim exported, a backup taken, volumes
 * hotplugged, a VM's CPU live-updated — driven while workers die, messages repeat, the API
 * server and the relay fail (on either lane) and the backend throttles (on AWS). Each scenario
 * checks its invariant at every audit-log instant (audit-invariants.ts), that it reached its end,
 * and that nothing was dead-lettered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { VirtualMachine, VirtualMachinePool } from '../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, PODS, PVCS, VM_BACKUP_TRACKERS, VM_BACKUPS, VM_CLONES, VM_EXPORTS, VM_POOLS, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Controller } from '../../shared/queue/message.ts';
import type { SandboxOptions } from '../../sandbox/sandbox.ts';
import { vmisWithTwoUnfinished } from '../support/migration-peaks.ts';
import { REAL } from '../support/lanes.ts';
import { vmiManifest, vmManifest } from '../e2e/support.ts';
import { creates, createdMoreThanOnce, launcherOf, overLimit, worstUnavailable } from './audit-invariants.ts';
import type { Rig } from './rig.ts';

const NS = 'default';

/** What a scenario hands back: what it checked, and what broke. */
export interface ScenarioResult {
  readonly checked: string;
  readonly violations: string[];
}

export interface Scenario {
  readonly name: string;
  /** The controllers it needs running. */
  readonly controllers: readonly Controller[];
  readonly sandbox?: SandboxOptions;
  /** Runs before the workers start (cluster configuration the controllers read once). */
  readonly prepare?: (user: KubeClient) => Promise<void>;
  readonly run: (rig: Rig, say: (line: string) => void) => Promise<ScenarioResult>;
}

/** Polls `cond` every 100 ms until it holds or `ms` pass. */
async function within(ms: number, cond: () => Promise<boolean>): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (await cond().catch(() => false)) return true;
    await sleep(100);
  }
  return false;
}

/** Waits, recording `what` as a violation when it never holds. */
async function reach(out: string[], what: string, cond: () => Promise<boolean>, ms = 120_000): Promise<boolean> {
  const ok = await within(ms, cond);
  if (!ok) out.push(`never reached: ${what}`);
  return ok;
}

const claim = (name: string): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: IMMEDIATE_CLASS },
});

/** A VM on a container disk and claim `<name>-data`. */
async function vmWithClaim(user: KubeClient, name: string, runStrategy: string): Promise<void> {
  await user.create(PVCS, claim(`${name}-data`));
  const vm = vmManifest(name, { runStrategy } as Partial<VirtualMachine['spec']>);
  const t = vm.spec.template.spec!;
  t.domain.devices.disks = [...(t.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
  t.volumes = [...(t.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }];
  await user.create(VMS, vm);
}

const IMAGE_2 = 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.1';

const pool: Scenario = {
  name: 'pool',
  controllers: ['pool', 'vm', 'vmi'],
  async run(rig, say) {
    const out: string[] = [];
    const { user } = rig;
    const vmi = vmiManifest('unused');
    const names = [0, 1, 2, 3].map((i) => `chaos-pool-${i}`);
    await user.create(VM_POOLS, {
      apiVersion: 'pool.kubevirt.io/v1beta1',
      kind: 'VirtualMachinePool',
      metadata: { name: 'chaos-pool', namespace: NS },
      spec: {
        replicas: 4,
        maxUnavailable: 1,
        selector: { matchLabels: { pool: 'chaos-pool' } },
        virtualMachineTemplate: { metadata: { labels: { pool: 'chaos-pool' } }, spec: { runStrategy: 'Always', template: { metadata: { labels: { pool: 'chaos-pool' } }, spec: vmi.spec } } },
      },
    } as VirtualMachinePool);
    const image = async (img: string | undefined) => {
      const vmis = await Promise.all(names.map((n) => user.get(VMIS, NS, n)));
      return vmis.every((v) => v?.status?.phase === 'Running' && v.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && (img === undefined || v.spec.volumes?.[0]?.containerDisk?.image === img));
    };
    if (!(await reach(out, 'the pool running 4 VMs', () => image(undefined)))) return { checked: 'pool', violations: out };
    const from = rig.sandbox.apiServer.audit.query().length;
    const p = (await user.get(VM_POOLS, NS, 'chaos-pool'))!;
    const t = structuredClone(p.spec.virtualMachineTemplate);
    t.spec!.template.spec!.volumes = [{ name: 'containerdisk', containerDisk: { image: IMAGE_2 } }];
    await user.patch(VM_POOLS, NS, 'chaos-pool', { type: 'merge', body: { spec: { virtualMachineTemplate: t } } });
    say('pool: template changed; rolling out under chaos');
    await reach(out, 'every pool VMI on the new image', () => image(IMAGE_2), 180_000);
    const audit = rig.sandbox.apiServer.audit.query();
    const { worst, instants } = worstUnavailable(audit, names, from);
    if (worst > 1) out.push(`${worst} pool VMs unavailable at once during the rollout (maxUnavailable 1)`);
    if (instants < 8) out.push(`the rollout wrote only ${instants} VMI instants: it proved nothing`);
    const vms = (await user.list(VMS, NS, { labelSelector: 'pool=chaos-pool' })).items.filter((v) => !v.metadata?.deletionTimestamp).length;
    if (vms !== 4) out.push(`${vms} pool VMs at the end, not 4`);
    return { checked: `rollout of 4 VMs, maxUnavailable 1: ${instants} VMI instants, at most ${worst} unavailable`, violations: out };
  },
};

const runStrategies: Scenario = {
  name: 'run-strategies',
  controllers: ['vm', 'vmi'],
  async run(rig, say) {
    const out: string[] = [];
    const { user } = rig;
    const names = ['chaos-vm-a', 'chaos-vm-b', 'chaos-vm-c'];
    for (const n of names) await user.create(VMS, vmManifest(n, { runStrategy: 'Always' } as Partial<VirtualMachine['spec']>));
    const running = async (n: string) => (await user.get(VMIS, NS, n))?.status?.phase === 'Running' && (await user.get(VMS, NS, n))?.status?.printableStatus === 'Running';
    const stopped = async (n: string) => (await user.get(VMIS, NS, n)) === undefined && (await user.get(VMS, NS, n))?.status?.printableStatus === 'Stopped';
    const cycles = 3;
    for (let c = 0; c < cycles; c++) {
      if (!(await reach(out, `cycle ${c}: every VM Running`, async () => (await Promise.all(names.map(running))).every(Boolean)))) break;
      for (const n of names) await user.patch(VMS, NS, n, { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
      if (!(await reach(out, `cycle ${c}: every VM Stopped`, async () => (await Promise.all(names.map(stopped))).every(Boolean)))) break;
      for (const n of names) await user.patch(VMS, NS, n, { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
      say(`run strategies: cycle ${c + 1}/${cycles} done`);
    }
    await reach(out, 'every VM Running at the end', async () => (await Promise.all(names.map(running))).every(Boolean));
    const audit = rig.sandbox.apiServer.audit.query();
    // One VMI per start: cycles + 1 starts of each VM, never a second VMI for one start.
    for (const n of names) {
      const made = creates(audit, 'virtualmachineinstances', (x) => x === n);
      if (made !== cycles + 1) out.push(`${n}: ${made} VMIs created for ${cycles + 1} starts`);
    }
    const twoLive = overLimit(audit, 'virtualmachineinstances', (o) => (names.includes(o.metadata?.name ?? '') ? o.metadata?.name : undefined));
    const twoPods = overLimit(audit, 'pods', launcherOf);
    out.push(...twoLive.map((x) => `two VMIs for one VM: ${x}`), ...twoPods.map((x) => `two launcher pods for one VMI: ${x}`));
    return { checked: `3 VMs stopped and started ${cycles}× each: one VMI per start, one launcher pod per VMI at every instant`, violations: out };
  },
};

const snapshotRestore: Scenario = {
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

const clone: Scenario = {
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
    await reach(out, 'the clone Succeeded', async () => (await user.get(VM_CLONES, NS, 'chaos-clone'))?.status?.phase === 'Succeeded', 180_000);
    await reach(out, 'the temporary snapshot and restore gone', async () => (await user.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`)) === undefined && (await user.get(VM_RESTORES, NS, `tmp-restore-${uid}`)) === undefined);
    const audit = rig.sandbox.apiServer.audit.query();
    const targets = creates(audit, 'virtualmachines', (n) => n === 'chaos-clone-dst');
    if (targets !== 1) out.push(`the target VM was created ${targets} times`);
    for (const [resource, name] of [['virtualmachinesnapshots', `tmp-snapshot-${uid}`], ['virtualmachinerestores', `tmp-restore-${uid}`]] as const) {
      const n = creates(audit, resource, (x) => x === name);
      if (n !== 1) out.push(`${name} created ${n} times`);
    }
    const left = (await user.list(VM_SNAPSHOT_CONTENTS, NS)).items.length;
    if (left !== 0) out.push(`${left} snapshot contents left behind by the clone`);
    return { checked: 'a VM cloned: one target VM, one temporary snapshot and restore (each created once, both gone), the clone Succeeded', violations: out };
  },
};

const exportScenario: Scenario = {
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
const backup: Scenario = {
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
const hotplug: Scenario = {
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
    for (const [i, vol] of ['disk-a', 'disk-b'].entries()) {
      await user.patch(VMIS, NS, HP, {
        type: 'json',
        ops: [
          { op: 'add', path: '/spec/volumes/-', value: { name: vol, persistentVolumeClaim: { claimName: `chaos-hp-${vol.slice(-1)}`, hotpluggable: true } } },
          { op: 'add', path: '/spec/domain/devices/disks/-', value: { name: vol, disk: { bus: 'scsi' } } },
        ],
      });
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

const LIVE = 'chaos-live';
const liveUpdate: Scenario = {
  name: 'live-update',
  controllers: ['vm', 'vmi', 'migration', 'workload-updater'],
  sandbox: { speed: 10, nodes: 2 },
  async prepare(user) {
    const configuration = { vmRolloutStrategy: 'LiveUpdate', liveUpdateConfiguration: { maxCpuSockets: 4 } };
    await user.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { configuration, workloadUpdateStrategy: { workloadUpdateMethods: ['LiveMigrate'] } } } });
  },
  async run(rig) {
    const out: string[] = [];
    const { user } = rig;
    const vm = vmManifest(LIVE, { runStrategy: 'Always' });
    vm.spec.template.spec!.domain.cpu = { sockets: 1, cores: 1, threads: 1 };
    vm.spec.template.spec!.domain.resources = { requests: { cpu: '100m', memory: '128Mi' } };
    await user.create(VMS, vm);
    const migratable = async () => {
      const v = await user.get(VMIS, NS, LIVE);
      return v?.status?.phase === 'Running' && v.spec.domain.cpu?.maxSockets === 4 && !!v.status.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True');
    };
    if (!(await reach(out, 'the VMI Running and migratable', migratable, 180_000))) return { checked: 'live update', violations: out };
    const uid = (await user.get(VMIS, NS, LIVE))?.metadata?.uid;
    await user.patch(VMS, NS, LIVE, { type: 'json', ops: [{ op: 'replace', path: '/spec/template/spec/domain/cpu/sockets', value: 2 }] });
    await reach(out, 'the VMI on 2 sockets after a migration', async () => {
      const v = await user.get(VMIS, NS, LIVE);
      return v?.status?.currentCPUTopology?.sockets === 2 && !v.status.conditions?.some((c) => c.type === 'HotVCPUChange');
    }, 180_000);
    const v = await user.get(VMIS, NS, LIVE);
    if (v?.metadata?.uid !== uid) out.push('the VMI was restarted, not updated live');
    const audit = rig.sandbox.apiServer.audit.query();
    const migrations = (await user.list(MIGRATIONS, NS)).items.filter((m) => m.spec?.vmiName === LIVE);
    if (migrations.length !== 1) out.push(`${migrations.length} migrations for one live update`);
    out.push(...vmisWithTwoUnfinished(audit).map((x) => `two unfinished migrations at once: ${x}`));
    return { checked: 'sockets raised on a running VM: one workload-update migration, never two unfinished, the same VMI on the new topology', violations: out };
  },
};

/** Every scenario, by name. */
export const SCENARIOS: readonly Scenario[] = [pool, runStrategies, snapshotRestore, clone, exportScenario, backup, hotplug, liveUpdate];
