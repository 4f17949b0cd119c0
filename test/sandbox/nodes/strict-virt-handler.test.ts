/**
 * virt-handler refuses and reports what the real one does (reference-node-side §1, §5 scenarios
 * 3–12, 17, 18, 20–23), on both lanes. VMIs, launcher pods and the controller's hand-off are made
 * by hand, correct and incorrect, as the VMI and migration controllers would write them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { boundClaim, cond, eventWith, eventsOf, handOff, KVM, launcherFor, makeVmi, NS, runningPod, startStrictSandbox, VHOST_VSOCK, vmiNow, vmiWhere, type Sandbox } from './strict-support.ts';
import { MERGE, VMIS, type clients } from './helpers.ts';
import type { Pod, Vmi } from '../../../sandbox/nodes/objects.ts';

const SYNC_REASON = 'Synchronizing with the Domain failed.';
const masquerade = { interfaces: [{ name: 'default', masquerade: {} }] };
const podNetwork = [{ name: 'default', pod: {} }];
const claimInfo = (claim: string, access: string, mode = 'Filesystem') => ({ claimName: claim, accessModes: [access], volumeMode: mode, capacity: { storage: '1Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0.055' });
const status = (v: Vmi) => v.status as Record<string, unknown> & { conditions?: NonNullable<Vmi['status']>['conditions'] };

describe('strict virt-handler (reference-node-side §1, §5)', () => {
  let sb: Sandbox;
  let api: ReturnType<typeof clients>;
  before(async () => {
    ({ sb, api } = await startStrictSandbox());
  });
  after(async () => sb?.stop());

  /** A VMI with one claim-backed disk and its running launcher pod (filesystem claim mounted). */
  async function vmiWithClaim(name: string, opts: { access?: 'ReadWriteOnce' | 'ReadWriteMany'; dataVolume?: boolean; runtimeUser?: number } = {}) {
    const claim = `${name}-disk`;
    await boundClaim(api.core, claim, 'Filesystem', opts.access ?? 'ReadWriteOnce');
    const source = opts.dataVolume ? { dataVolume: { name: claim } } : { persistentVolumeClaim: { claimName: claim } };
    const vmi = await makeVmi(api, name, { domain: { devices: { ...masquerade, disks: [{ name: 'disk', disk: { bus: 'virtio' } }] } }, networks: podNetwork, volumes: [{ name: 'disk', ...source }] }, { runtimeUser: opts.runtimeUser ?? 107 });
    const pod = await runningPod(api.core, launcherFor(vmi, { volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: claim } }], mounts: [{ name: 'disk', mountPath: '/var/run/kubevirt-private/vmi-disks/disk' }] }));
    return { vmi, pod, claim };
  }

  test('§5.3: a non-root VMI whose claim has no volume status stays Scheduled: Synchronized=False "missing volume status", SyncFailed, not migratable, selinuxContext written', async () => {
    // arrange
    const { pod, claim } = await vmiWithClaim('nr-missing');
    // act
    await handOff(api, 'nr-missing', pod);
    // assert
    const v = await vmiWhere(api, 'nr-missing', 'Synchronized=False', (x) => cond(x.status?.conditions, 'Synchronized')?.status === 'False');
    const sync = cond(v.status?.conditions, 'Synchronized')!;
    assert.deepEqual([v.status?.phase, sync.reason, sync.message], ['Scheduled', SYNC_REASON, 'missing volume status for volume disk']);
    const live = cond(v.status?.conditions, 'LiveMigratable')!;
    assert.deepEqual([live.status, live.reason, live.message], ['False', 'DisksNotLiveMigratable', `cannot migrate VMI: Unable to determine if PVC ${claim} is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`]);
    assert.deepEqual([status(v)['migrationMethod'], status(v)['selinuxContext']], ['BlockMigration', 'none']);
    const ev = await eventWith(api.core, 'nr-missing', 'SyncFailed');
    assert.deepEqual([ev.type, ev.message, ev.component], ['Warning', 'missing volume status for volume disk', 'virt-handler']);
  });

  test('§5.3: an entry without persistentVolumeClaimInfo is the same; the controller\'s claim info then lets it run', async () => {
    // arrange
    const { pod, claim } = await vmiWithClaim('nr-noinfo');
    await handOff(api, 'nr-noinfo', pod, { volumeStatus: [{ name: 'disk', target: '' }] });
    await vmiWhere(api, 'nr-noinfo', 'missing volume status', (x) => cond(x.status?.conditions, 'Synchronized')?.message === 'missing volume status for volume disk');
    // act: the VMI controller writes the claim info
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'nr-noinfo', body: { status: { volumeStatus: [{ name: 'disk', target: '', persistentVolumeClaimInfo: claimInfo(claim, 'ReadWriteOnce') }] } } }, MERGE);
    // assert
    const v = await vmiWhere(api, 'nr-noinfo', 'Running', (x) => x.status?.phase === 'Running');
    assert.equal(cond(v.status?.conditions, 'Synchronized'), undefined, 'the failure is gone after a successful sync');
    const events = (await eventsOf(api.core, 'nr-noinfo')).map((e) => `${e.type} ${e.reason}: ${e.message}`);
    assert.ok(events.includes('Normal Created: VirtualMachineInstance defined.') && events.includes('Normal Started: VirtualMachineInstance started.'), events.join('\n'));
  });

  test('§5.4: the same claim declared as a dataVolume → no volume-status error (it runs), still not migratable', async () => {
    // arrange
    const { pod, claim } = await vmiWithClaim('nr-dv', { dataVolume: true });
    // act
    await handOff(api, 'nr-dv', pod);
    // assert
    const v = await vmiWhere(api, 'nr-dv', 'Running', (x) => x.status?.phase === 'Running');
    assert.equal(cond(v.status?.conditions, 'LiveMigratable')?.message, `cannot migrate VMI: Unable to determine if PVC ${claim} is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`);
  });

  test('§5.5: a RWO claim with its status, masquerade → Running, LiveMigratable=False "is not shared", StorageLiveMigratable=True; a migration of it is refused', async () => {
    // arrange
    const { pod, claim } = await vmiWithClaim('rwo');
    // act
    await handOff(api, 'rwo', pod, { volumeStatus: [{ name: 'disk', target: '', persistentVolumeClaimInfo: claimInfo(claim, 'ReadWriteOnce') }] });
    // assert
    const v = await vmiWhere(api, 'rwo', 'Running', (x) => x.status?.phase === 'Running');
    const live = cond(v.status?.conditions, 'LiveMigratable')!;
    assert.deepEqual([live.status, live.reason, live.message], ['False', 'DisksNotLiveMigratable', `cannot migrate VMI: PVC ${claim} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`]);
    assert.equal(cond(v.status?.conditions, 'StorageLiveMigratable')?.status, 'True');
    // and virt-api refuses a migration of it
    const err = await api.custom
      .createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstancemigrations', namespace: NS, body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-rwo' }, spec: { vmiName: 'rwo' } } })
      .then(() => undefined, (e: unknown) => e as { code?: number; body?: unknown });
    assert.equal(err?.code, 400);
    assert.equal(
      (typeof err?.body === 'string' ? JSON.parse(err.body) : err?.body as { message?: string })?.message,
      `admission webhook "migration-create-validator.kubevirt.io" denied the request: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: PVC ${claim} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`,
    );
  });

  test('§5.6: a RWX claim (and no other local disk) → LiveMigratable=True, LiveMigration', async () => {
    // arrange
    const { pod, claim } = await vmiWithClaim('rwx', { access: 'ReadWriteMany' });
    // act
    await handOff(api, 'rwx', pod, { volumeStatus: [{ name: 'disk', target: '', persistentVolumeClaimInfo: claimInfo(claim, 'ReadWriteMany') }] });
    // assert
    const v = await vmiWhere(api, 'rwx', 'Running', (x) => x.status?.phase === 'Running');
    assert.deepEqual([cond(v.status?.conditions, 'LiveMigratable')?.status, status(v)['migrationMethod']], ['True', 'LiveMigration']);
  });

  test('§5.7: bridge on the pod network → InterfaceNotLiveMigratable; StorageLiveMigratable NotMigratable with the joined message', async () => {
    // arrange
    const vmi = await makeVmi(api, 'bridged', { domain: { devices: { interfaces: [{ name: 'default', bridge: {} }] } }, networks: podNetwork, volumes: [{ name: 'cd', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }] }, { runtimeUser: 107 });
    const pod = await runningPod(api.core, launcherFor(vmi));
    // act
    await handOff(api, 'bridged', pod);
    // assert
    const v = await vmiWhere(api, 'bridged', 'Running', (x) => x.status?.phase === 'Running');
    const msg = 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network';
    assert.deepEqual([cond(v.status?.conditions, 'LiveMigratable')?.reason, cond(v.status?.conditions, 'LiveMigratable')?.message], ['InterfaceNotLiveMigratable', msg]);
    const storage = cond(v.status?.conditions, 'StorageLiveMigratable')!;
    assert.deepEqual([storage.status, storage.reason, storage.message], ['False', 'NotMigratable', `InterfaceNotLiveMigratable: ${msg}`]);
  });

  // §5.8–10: what the running VMI's devices make of LiveMigratable / StorageLiveMigratable.
  const GPU = { name: 'g', deviceName: 'nvidia.com/GA102' };
  const migratabilityRows: { scenario: string; name: string; domain: Record<string, unknown>; rwxLun?: true; limits?: Record<string, string>; live: [string, string?, string?]; storage?: [string, string?, string?] }[] = [
    { scenario: '8', name: 'reenlightenment', domain: { features: { hyperv: { reenlightenment: { enabled: true } } } }, live: ['False', 'NoTSCFrequencyNotLiveMigratable', 'HyperV Reenlightenment VMIs cannot migrate when TSC Frequency is not exposed on the cluster: guest timers might be inconsistent'] },
    { scenario: '9', name: 'reservation', domain: { devices: { ...masquerade, disks: [{ name: 'disk', lun: { reservation: true } }] } }, rwxLun: true, live: ['True'], storage: ['False', 'NotMigratable', 'PersistentReservationNotLiveMigratable: VMI uses SCSI persistent reservation'] },
    { scenario: '10', name: 'hostdev', domain: { devices: { ...masquerade, hostDevices: [{ name: 'h', deviceName: 'example.org/nic' }] } }, live: ['False', 'HostDeviceNotLiveMigratable', 'VMI specifies non-migratable generic PCI host device'] },
    { scenario: '10', name: 'two-gpus', domain: { devices: { ...masquerade, gpus: [GPU, { ...GPU, name: 'g2' }] } }, live: ['False', 'HostDeviceNotLiveMigratable', 'VMI specifies too many GPUs'] },
    { scenario: '10', name: 'dedicated-vsock', domain: { cpu: { dedicatedCpuPlacement: true }, devices: { ...masquerade, autoattachVSOCK: true } }, limits: { [KVM]: '1', 'devices.kubevirt.io/tun': '1', 'devices.kubevirt.io/vhost-net': '1', [VHOST_VSOCK]: '1' }, live: ['True'] },
  ];
  for (const r of migratabilityRows) {
    test(`§5.${r.scenario}: ${r.name} → LiveMigratable ${r.live.join(' ')}${r.storage ? `; StorageLiveMigratable ${r.storage.join(' ')}` : ''}`, async () => {
      // arrange
      const claim = `${r.name}-disk`;
      if (r.rwxLun) await boundClaim(api.core, claim, 'Filesystem', 'ReadWriteMany');
      const volumes = r.rwxLun ? [{ name: 'disk', persistentVolumeClaim: { claimName: claim } }] : [{ name: 'cd', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }];
      const domain = { ...r.domain, devices: { ...masquerade, ...(r.domain['devices'] as object | undefined) } };
      const vmi = await makeVmi(api, r.name, { domain, networks: podNetwork, volumes }, { runtimeUser: 107 });
      const disk = r.rwxLun ? { volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: claim } }], mounts: [{ name: 'disk', mountPath: '/var/run/kubevirt-private/vmi-disks/disk' }] } : {};
      const pod = await runningPod(api.core, launcherFor(vmi, { ...disk, ...(r.limits && { limits: r.limits }) }));
      // act
      await handOff(api, r.name, pod, r.rwxLun ? { volumeStatus: [{ name: 'disk', target: '', persistentVolumeClaimInfo: claimInfo(claim, 'ReadWriteMany') }] } : {});
      // assert
      const v = await vmiWhere(api, r.name, 'Running', (x) => x.status?.phase === 'Running');
      const live = cond(v.status?.conditions, 'LiveMigratable');
      assert.deepEqual([live?.status, live?.reason, live?.message].slice(0, r.live.length), r.live, 'LiveMigratable');
      if (r.storage) {
        const storage = cond(v.status?.conditions, 'StorageLiveMigratable');
        assert.deepEqual([storage?.status, storage?.reason, storage?.message], r.storage, 'StorageLiveMigratable');
      }
    });
  }

  test('§5.11: a Scheduled VMI whose activePods names no pod on the node → Failed, Warning Stopped', async () => {
    // arrange
    const vmi = await makeVmi(api, 'no-active', { domain: { devices: {} } });
    const pod = await runningPod(api.core, launcherFor(vmi));
    // act: hand off with activePods naming a pod that does not exist
    await handOff(api, 'no-active', pod, { activePods: { 'no-such-uid': pod.spec!.nodeName! } });
    // assert
    await vmiWhere(api, 'no-active', 'Failed', (x) => x.status?.phase === 'Failed');
    const ev = await eventWith(api.core, 'no-active', 'Stopped');
    assert.deepEqual([ev.type, ev.message], ['Warning', 'The VirtualMachineInstance crashed.']);
  });

  test('§5.12: a Scheduled VMI without the kubevirt.io/nodeName label is invisible: no conditions, no selinuxContext', async () => {
    // arrange
    const unlabelled = await makeVmi(api, 'unlabelled', { domain: { devices: {} } });
    const labelled = await makeVmi(api, 'labelled', { domain: { devices: {} } });
    const [p1, p2] = await Promise.all([runningPod(api.core, launcherFor(unlabelled)), runningPod(api.core, launcherFor(labelled))]);
    // act: both handed off; only the second with the label
    await handOff(api, 'unlabelled', p1, {}, false);
    await handOff(api, 'labelled', p2);
    // assert: by the time the labelled one runs, the handler has had every chance to see the other
    await vmiWhere(api, 'labelled', 'Running', (x) => x.status?.phase === 'Running');
    const v = await vmiNow(api, 'unlabelled');
    assert.deepEqual([v.status?.phase, status(v)['selinuxContext'], v.status?.conditions ?? []], ['Scheduled', undefined, []]);
  });

  test('§5.14: a launcher admitted on a node without kvm → SyncFailed "failed to set up file ownership for /dev/kvm", stays Scheduled', async () => {
    // arrange
    const vmi = await makeVmi(api, 'kvm-missing', { domain: { devices: {} } });
    const pod = await runningPod(api.core, launcherFor(vmi, { nodeName: 'node01' }));
    // act
    await handOff(api, 'kvm-missing', pod);
    // assert
    const v = await vmiWhere(api, 'kvm-missing', 'Synchronized=False', (x) => cond(x.status?.conditions, 'Synchronized')?.status === 'False');
    assert.equal(v.status?.phase, 'Scheduled');
    assert.match(cond(v.status?.conditions, 'Synchronized')?.message ?? '', /^failed to set up file ownership for \/dev\/kvm: failed opening kvm for path root: \/proc\/\d+\/root, relative: \/dev\/kvm: no such file or directory$/);
  });

  test('§1.3 #15: a non-root VMI whose pod got no tun device → Failed (a critical network error)', async () => {
    // arrange: the pod asks for kvm only
    const vmi = await makeVmi(api, 'no-tun', { domain: { devices: masquerade }, networks: podNetwork }, { runtimeUser: 107 });
    const pod = await runningPod(api.core, launcherFor(vmi, { limits: { [KVM]: '1', 'devices.kubevirt.io/vhost-net': '1' } }));
    // act
    await handOff(api, 'no-tun', pod);
    // assert
    await vmiWhere(api, 'no-tun', 'Failed', (x) => x.status?.phase === 'Failed');
    const ev = await eventWith(api.core, 'no-tun', 'SyncFailed');
    assert.match(ev.message, /^failed to set up tun device, failed opening tun for path root: \/proc\/\d+\/root, relative: \/dev\/net\/tun: no such file or directory$/);
  });

  test('§5.17: hotplug — MountedToPod only once the attachment pod is ready on the node, then Ready', async () => {
    // arrange: a running VMI and a hotplug entry the controller wrote, its attachment pod not yet ready
    const vmi = await makeVmi(api, 'hot', { domain: { devices: {} }, volumes: [{ name: 'hp', persistentVolumeClaim: { claimName: 'hp-claim', hotpluggable: true } }] });
    const pod = await runningPod(api.core, launcherFor(vmi));
    // The VMI is non-root (virt-api's webhook): the controller's claim info on the entry is what virt-handler's ownership step reads.
    const info = claimInfo('hp-claim', 'ReadWriteOnce');
    await handOff(api, 'hot', pod, { volumeStatus: [{ name: 'hp', target: '', phase: 'Bound', hotplugVolume: {}, persistentVolumeClaimInfo: info }] });
    await vmiWhere(api, 'hot', 'Scheduled, waiting on its hotplug volume', (x) => x.status?.phase === 'Scheduled' && status(x)['selinuxContext'] === 'none');
    const attach = await runningPod(api.core, {
      metadata: { name: 'hp-volume-hot', namespace: NS, labels: { 'kubevirt.io': 'hotplug-disk' }, annotations: { 'kubevirt.io/owner-vmi-name': 'hot' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name!, uid: pod.metadata!.uid!, controller: true }] },
      spec: { nodeName: pod.spec!.nodeName!, containers: [{ name: 'hotplug-disk', image: 'busybox' }] },
    });
    // act: the controller sets the attachment pod's uid
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'hot', body: { status: { volumeStatus: [{ name: 'hp', target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', hotplugVolume: { attachPodName: 'hp-volume-hot', attachPodUID: attach.metadata!.uid! }, persistentVolumeClaimInfo: info }] } } }, MERGE);
    // assert: §5.18 the start waited for it (no Synchronized error meanwhile), then the volume goes MountedToPod → Ready
    const v = await vmiWhere(api, 'hot', 'volume Ready', (x) => (x.status?.['volumeStatus'] as { phase?: string }[] | undefined)?.[0]?.phase === 'Ready');
    const entry = (v.status?.['volumeStatus'] as Record<string, unknown>[])[0]!;
    assert.deepEqual([entry['reason'], entry['message']], ['VolumeReady', 'Successfully attach hotplugged volume hp to VM']);
    assert.equal((await eventsOf(api.core, 'hot')).filter((e) => e.reason === 'SyncFailed').length, 0, 'waiting on hotplug volumes is no sync error');
    assert.ok((await eventsOf(api.core, 'hot')).some((e) => e.reason === 'VolumeMountedToPod' && e.message === 'Volume hp has been mounted in virt-launcher pod'));
  });

  test('§5.18: a declarative hotplug volume whose attachment pod never gets a UID → Scheduled, no Synchronized error, never defined', async () => {
    // arrange
    const vmi = await makeVmi(api, 'hot-wait', { domain: { devices: {} }, volumes: [{ name: 'hp', persistentVolumeClaim: { claimName: 'hp-claim', hotpluggable: true } }] });
    const pod = await runningPod(api.core, launcherFor(vmi));
    const control = await makeVmi(api, 'hot-control', { domain: { devices: {} } });
    const controlPod = await runningPod(api.core, launcherFor(control));
    // act
    await handOff(api, 'hot-wait', pod, { volumeStatus: [{ name: 'hp', target: '', phase: 'AttachedToNode', hotplugVolume: { attachPodName: 'hp-volume-x' } }] });
    await handOff(api, 'hot-control', controlPod);
    // assert
    await vmiWhere(api, 'hot-control', 'Running', (x) => x.status?.phase === 'Running');
    const v = await vmiNow(api, 'hot-wait');
    assert.deepEqual([v.status?.phase, cond(v.status?.conditions, 'Synchronized')], ['Scheduled', undefined]);
    assert.ok(!(await eventsOf(api.core, 'hot-wait')).some((e) => e.reason === 'Created'), 'no domain defined');
  });

  async function runningVmi(name: string, spec: Record<string, unknown> = { domain: { devices: {} } }, statusExtra: Record<string, unknown> = {}) {
    const vmi = await makeVmi(api, name, spec);
    const pod = await runningPod(api.core, launcherFor(vmi));
    await handOff(api, name, pod, statusExtra);
    await vmiWhere(api, name, 'Running', (x) => x.status?.phase === 'Running');
    return { vmi, pod };
  }

  test('§5.21: the migration happy path, with each side\'s events; the target waits for its label', async () => {
    // arrange
    const { vmi, pod } = await runningVmi('mig-ok');
    const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'kubevirt.io/created-by': vmi.uid } }, topologyKey: 'kubernetes.io/hostname' }] } };
    const targetBody = launcherFor(vmi);
    targetBody.spec!.affinity = anti;
    targetBody.metadata!.labels = { ...targetBody.metadata!.labels, 'kubevirt.io/migrationJobUID': 'mig-ok-uid' };
    const target = await runningPod(api.core, targetBody);
    const state = { migrationUid: 'mig-ok-uid', sourceNode: pod.spec!.nodeName, targetNode: target.spec!.nodeName, sourcePod: pod.metadata!.name, targetPod: target.metadata!.name };
    // act 1: migrationState without the target label → the target handler never sees it
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'mig-ok', body: { status: { migrationState: state } } }, MERGE);
    const control = await runningVmi('mig-control');
    assert.ok(control);
    assert.equal((await vmiNow(api, 'mig-ok')).status?.migrationState?.targetNodeAddress, undefined, 'no target prepared without the label');
    // act 2: the label
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'mig-ok', body: { metadata: { labels: { 'kubevirt.io/migrationTargetNodeName': target.spec!.nodeName! } } } }, MERGE);
    // assert
    const done = await vmiWhere(api, 'mig-ok', 'migrated', (x) => x.status?.migrationState?.completed === true && x.metadata?.labels?.['kubevirt.io/nodeName'] === target.spec!.nodeName);
    assert.equal(done.status?.nodeName, target.spec!.nodeName);
    const events = (await eventsOf(api.core, 'mig-ok')).map((e) => `${e.reason}: ${e.message}`);
    for (const want of ['PreparingTarget: VirtualMachineInstance Migration Target Prepared.', 'Migrating: VirtualMachineInstance is migrating.', `Migrated: The VirtualMachineInstance migrated to node ${target.spec!.nodeName!}.`]) {
      assert.ok(events.includes(want), `${want} in\n${events.join('\n')}`);
    }
  });

  test('§5.22: a migration hand-off with no target node → the source fails the VMI, Warning Migrated "unknown host"', async () => {
    // arrange
    const { pod } = await runningVmi('mig-lost');
    // act
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'mig-lost', body: { status: { migrationState: { migrationUid: 'lost-uid', sourceNode: pod.spec!.nodeName, sourcePod: pod.metadata!.name } } } }, MERGE);
    // assert
    const v = await vmiWhere(api, 'mig-lost', 'Failed', (x) => x.status?.phase === 'Failed');
    assert.deepEqual([v.status?.migrationState?.failed, v.status?.migrationState?.completed], [true, true]);
    // The handler records the event after its status write: it may come a moment later.
    const ev = await eventWith(api.core, 'mig-lost', 'Migrated');
    assert.deepEqual([ev?.type, ev?.message], ['Warning', 'The VirtualMachineInstance migrated to unknown host.']);
  });

  test('§5.23: CBT Initializing → Enabled once the domain runs, after marking the backup trackers that hold a checkpoint', async () => {
    // arrange: a tracker of the VM with a checkpoint
    const tracker = { apiVersion: 'backup.kubevirt.io/v1alpha1', kind: 'VirtualMachineBackupTracker', metadata: { name: 'cbt-tracker', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'cbt' } } };
    await api.custom.createNamespacedCustomObject({ group: 'backup.kubevirt.io', version: 'v1alpha1', plural: 'virtualmachinebackuptrackers', namespace: NS, body: tracker });
    await api.custom.patchNamespacedCustomObjectStatus({ group: 'backup.kubevirt.io', version: 'v1alpha1', plural: 'virtualmachinebackuptrackers', namespace: NS, name: 'cbt-tracker', body: { status: { latestCheckpoint: { name: 'cp1' } } } }, MERGE);
    // act: the VM controller created the VMI Initializing
    await runningVmi('cbt', { domain: { devices: {} } }, { changedBlockTracking: { state: 'Initializing' } });
    // assert
    await vmiWhere(api, 'cbt', 'CBT Enabled', (x) => (x.status?.['changedBlockTracking'] as { state?: string } | undefined)?.state === 'Enabled');
    const t = (await api.custom.getNamespacedCustomObject({ group: 'backup.kubevirt.io', version: 'v1alpha1', plural: 'virtualmachinebackuptrackers', namespace: NS, name: 'cbt-tracker' })) as { status?: { checkpointRedefinitionRequired?: boolean } };
    assert.equal(t.status?.checkpointRedefinitionRequired, true);
  });

  test('§5.23: a VMI that was not Initializing when its domain was defined stays Initializing (no overlays until a restart)', async () => {
    // arrange
    await runningVmi('cbt-late');
    // act
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace: NS, name: 'cbt-late', body: { status: { changedBlockTracking: { state: 'Initializing' } } } }, MERGE);
    const control = await runningVmi('cbt-late-control', { domain: { devices: {} } }, { changedBlockTracking: { state: 'Initializing' } });
    assert.ok(control);
    await vmiWhere(api, 'cbt-late-control', 'CBT Enabled', (x) => (x.status?.['changedBlockTracking'] as { state?: string } | undefined)?.state === 'Enabled');
    // assert
    assert.equal(((await vmiNow(api, 'cbt-late')).status?.['changedBlockTracking'] as { state?: string }).state, 'Initializing');
  });
});

export type { Pod };
