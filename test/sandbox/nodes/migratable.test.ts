/**
 * virt-handler's migratability verdicts (sandbox/nodes/vmi-migratable.ts) against the rules of
 * KubeVirt's `calculateLiveMigrationCondition` / `calculateLiveStorageMigrationCondition` /
 * `checkVolumesForMigration` (reference-node-side §1.4, §5 scenarios 3–10), as a table.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_HANDLER_CONFIG, handlerConfigOf, liveMigratable, storageLiveMigratable, type HandlerConfig } from '../../../sandbox/nodes/vmi-migratable.ts';
import type { Vmi } from '../../../sandbox/nodes/objects.ts';

const HOST_MODEL_NODE = { 'host-model-cpu.node.kubevirt.io/Skylake': 'true' };
const masq = [{ name: 'default', masquerade: {} }];
const pod = [{ name: 'default', pod: {} }];
const info = (claim: string, modes: string[]) => ({ claimName: claim, accessModes: modes });

function vmi(domain: Record<string, unknown>, volumes: Record<string, unknown>[] = [], status: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Vmi {
  return { metadata: { name: 'v', annotations: (extra['annotations'] as Record<string, string>) ?? {} }, spec: { domain: { devices: { interfaces: masq }, ...domain }, networks: pod, volumes, ...(extra['spec'] as object) } as unknown as Vmi['spec'], status: { nodeName: 'node01', ...status } } as Vmi;
}

const rwoMsg = (c: string) => `cannot migrate VMI: PVC ${c} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;
const unknownMsg = (c: string) => `cannot migrate VMI: Unable to determine if PVC ${c} is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;
const IFACE = 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network';

describe('LiveMigratable, StorageLiveMigratable, migrationMethod', () => {
  const rows: { name: string; vmi: Vmi; config?: HandlerConfig; labels?: Record<string, string>; live: [string, string?, string?]; method: string; storage?: [string, string?, string?] }[] = [
    { name: '§5.3 PVC without volume status', vmi: vmi({}, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }]), live: ['False', 'DisksNotLiveMigratable', unknownMsg('c')], method: 'BlockMigration', storage: ['True'] },
    { name: '§5.3 entry without claim info', vmi: vmi({}, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }], { volumeStatus: [{ name: 'd' }] }), live: ['False', 'DisksNotLiveMigratable', unknownMsg('c')], method: 'BlockMigration' },
    { name: '§5.4 dataVolume without volume status', vmi: vmi({}, [{ name: 'd', dataVolume: { name: 'dv' } }]), live: ['False', 'DisksNotLiveMigratable', unknownMsg('dv')], method: 'BlockMigration' },
    { name: '§5.5 RWO claim', vmi: vmi({}, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }], { volumeStatus: [{ name: 'd', persistentVolumeClaimInfo: info('c', ['ReadWriteOnce']) }] }), live: ['False', 'DisksNotLiveMigratable', rwoMsg('c')], method: 'BlockMigration', storage: ['True'] },
    { name: 'RWO claim being migrated (status.migratedVolumes)', vmi: vmi({}, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }], { volumeStatus: [{ name: 'd', persistentVolumeClaimInfo: info('c', ['ReadWriteOnce']) }], migratedVolumes: [{ volumeName: 'd' }] }), live: ['True'], method: 'BlockMigration' },
    { name: '§5.6 RWX + cloudInit disk', vmi: vmi({ devices: { interfaces: masq, disks: [{ name: 'ci', disk: {} }] } }, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }, { name: 'ci', cloudInitNoCloud: {} }], { volumeStatus: [{ name: 'd', persistentVolumeClaimInfo: info('c', ['ReadWriteMany']) }] }), live: ['True'], method: 'BlockMigration' },
    { name: '§5.6 RWX + read-only CD-ROM', vmi: vmi({ devices: { interfaces: masq, disks: [{ name: 'ci', cdrom: {} }] } }, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }, { name: 'ci', cloudInitNoCloud: {} }], { volumeStatus: [{ name: 'd', persistentVolumeClaimInfo: info('c', ['ReadWriteMany']) }] }), live: ['True'], method: 'LiveMigration' },
    { name: 'writable CD-ROM forces block migration', vmi: vmi({ devices: { interfaces: masq, disks: [{ name: 'ci', cdrom: { readonly: false } }] } }, [{ name: 'ci', cloudInitNoCloud: {} }]), live: ['True'], method: 'BlockMigration' },
    { name: 'non-shared hostDisk', vmi: vmi({}, [{ name: 'h', hostDisk: { path: '/d/x.img', type: 'Disk' } }]), live: ['False', 'DisksNotLiveMigratable', 'cannot migrate VMI with non-shared HostDisk'], method: 'BlockMigration' },
    { name: 'shared hostDisk', vmi: vmi({}, [{ name: 'h', hostDisk: { path: '/d/x.img', type: 'Disk', shared: true } }]), live: ['True'], method: 'LiveMigration' },
    { name: '§5.7 bridge on the pod network', vmi: vmi({ devices: { interfaces: [{ name: 'default', bridge: {} }] } }), live: ['False', 'InterfaceNotLiveMigratable', IFACE], method: 'LiveMigration', storage: ['False', 'NotMigratable', `InterfaceNotLiveMigratable: ${IFACE}`] },
    { name: 'bridge with the allow annotation', vmi: vmi({ devices: { interfaces: [{ name: 'default', bridge: {} }] } }, [], {}, { annotations: { 'kubevirt.io/allow-pod-bridge-network-live-migration': '' } }), live: ['True'], method: 'LiveMigration' },
    { name: 'no interface named after the pod network', vmi: vmi({ devices: { interfaces: [{ name: 'other', masquerade: {} }] } }), live: ['False', 'InterfaceNotLiveMigratable', 'no primary interface found for network default'], method: 'LiveMigration' },
    { name: 'binding plugin with a migration stanza', vmi: vmi({ devices: { interfaces: [{ name: 'default', binding: { name: 'mig' } }] } }), config: handlerConfigOf({ spec: { configuration: { network: { binding: { mig: { migration: {} } } } } } }), live: ['True'], method: 'LiveMigration' },
    { name: 'host-model on a node without a host model', vmi: vmi({ cpu: { model: 'host-model' } }), labels: {}, live: ['False', 'CPUModeLiveMigratable', 'the node "node01" does not allow migration with host-model'], method: 'LiveMigration' },
    { name: 'host-model on a labelled node', vmi: vmi({ cpu: { model: 'host-model' } }), labels: HOST_MODEL_NODE, live: ['True'], method: 'LiveMigration' },
    { name: '§5.8 HyperV reenlightenment without TSC', vmi: vmi({ features: { hyperv: { reenlightenment: { enabled: true } } } }), live: ['False', 'NoTSCFrequencyNotLiveMigratable', 'HyperV Reenlightenment VMIs cannot migrate when TSC Frequency is not exposed on the cluster: guest timers might be inconsistent'], method: 'LiveMigration' },
    { name: 'HyperV reenlightenment with a TSC hint', vmi: vmi({ features: { hyperv: { reenlightenment: { enabled: true } } } }, [], { topologyHints: { tscFrequency: 2400000000 } }), live: ['True'], method: 'LiveMigration' },
    { name: '§5.9 lun reservation + RWX', vmi: vmi({ devices: { interfaces: masq, disks: [{ name: 'd', lun: { reservation: true } }] } }, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }], { volumeStatus: [{ name: 'd', persistentVolumeClaimInfo: info('c', ['ReadWriteMany']) }] }), live: ['True'], method: 'LiveMigration', storage: ['False', 'NotMigratable', 'PersistentReservationNotLiveMigratable: VMI uses SCSI persistent reservation'] },
    { name: '§5.10 a host device', vmi: vmi({ devices: { interfaces: masq, hostDevices: [{ name: 'h', deviceName: 'x/y' }] } }), live: ['False', 'HostDeviceNotLiveMigratable', 'VMI specifies non-migratable generic PCI host device'], method: 'LiveMigration' },
    { name: '§5.10 two GPUs', vmi: vmi({ devices: { interfaces: masq, gpus: [{ name: 'a', deviceName: 'g' }, { name: 'b', deviceName: 'g' }] } }), live: ['False', 'HostDeviceNotLiveMigratable', 'VMI specifies too many GPUs'], method: 'LiveMigration' },
    { name: 'one GPU, gate off', vmi: vmi({ devices: { interfaces: masq, gpus: [{ name: 'a', deviceName: 'g' }] } }), live: ['False', 'HostDeviceNotLiveMigratable', 'VMI specifies a GPU but feature gate VGPULiveMigration is not enabled'], method: 'LiveMigration' },
    { name: 'one non-mdev GPU, gate on', vmi: vmi({ devices: { interfaces: masq, gpus: [{ name: 'a', deviceName: 'g' }] } }), config: { ...DEFAULT_HANDLER_CONFIG, featureGates: ['VGPULiveMigration'] }, live: ['False', 'HostDeviceNotLiveMigratable', 'VMI specifies non-migratable GPU device'], method: 'LiveMigration' },
    { name: '§5.10 dedicated CPUs, SR-IOV secondary, VSOCK: migratable', vmi: vmi({ cpu: { dedicatedCpuPlacement: true }, devices: { interfaces: [...masq, { name: 'sriov', sriov: {} }], autoattachVSOCK: true } }), live: ['True'], method: 'LiveMigration' },
    { name: 'SEV', vmi: vmi({ launchSecurity: { sev: {} } }), live: ['False', 'SEVNotLiveMigratable', 'VMI uses SEV'], method: 'LiveMigration' },
    { name: 'hyperv passthrough', vmi: vmi({ features: { hypervPassthrough: { enabled: true } } }), live: ['False', 'HypervPassthroughNotLiveMigratable', 'VMI uses hyperv passthrough'], method: 'LiveMigration' },
    { name: 'first failing rule wins: interface before disks', vmi: vmi({ devices: { interfaces: [{ name: 'default', bridge: {} }] } }, [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }]), live: ['False', 'InterfaceNotLiveMigratable', IFACE], method: 'BlockMigration' },
  ];
  for (const r of rows) {
    test(r.name, () => {
      // arrange
      const input = { vmi: r.vmi, config: r.config ?? DEFAULT_HANDLER_CONFIG, nodeLabels: r.labels ?? HOST_MODEL_NODE };
      // act
      const live = liveMigratable(input);
      const storage = storageLiveMigratable(input);
      // assert
      assert.deepEqual([live.condition.status, live.condition.reason, live.condition.message].slice(0, r.live.length), r.live, 'LiveMigratable');
      assert.equal(live.block ? 'BlockMigration' : 'LiveMigration', r.method, 'migrationMethod');
      if (r.storage) assert.deepEqual([storage.status, storage.reason, storage.message].slice(0, r.storage.length), r.storage, 'StorageLiveMigratable');
    });
  }

  test('StorageLiveMigratable accumulates every failing rule, in KubeVirt\'s order', () => {
    // arrange
    const v = vmi({ devices: { interfaces: [{ name: 'default', bridge: {} }], disks: [{ name: 'd', lun: { reservation: true } }] }, features: { hypervPassthrough: { enabled: true } } });
    // act
    const s = storageLiveMigratable({ vmi: v, config: DEFAULT_HANDLER_CONFIG, nodeLabels: HOST_MODEL_NODE });
    // assert
    assert.equal(s.message, `InterfaceNotLiveMigratable: ${IFACE}, PersistentReservationNotLiveMigratable: VMI uses SCSI persistent reservation, HypervPassthroughNotLiveMigratable: VMI uses hyperv passthrough`);
  });
});
