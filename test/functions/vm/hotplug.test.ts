/**
 * The VM controller's hotplug decisions, table-driven against reference-vm-vmi-depth §3.3:
 * `status.volumeRequests` applied to a spec, the ones the VMI still needs, their trimming, and
 * declarative hotplug (its gates and the VMI volume/disk lists it produces).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec, VirtualMachineVolumeRequest } from '../../../shared/api/index.ts';
import { declarativeHotplugApplies, declarativeVolumeChange } from '../../../functions/vm/hotplug/declarative.ts';
import { applyVolumeRequests, trimVolumeRequests, vmiVolumeRequests } from '../../../functions/vm/hotplug/volume-requests.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';

const root = { name: 'root', containerDisk: { image: 'x' } };
const rootDisk = { name: 'root', disk: { bus: 'virtio' } };
const hp = (name: string, claim = `${name}-claim`) => ({ name, persistentVolumeClaim: { claimName: claim, hotpluggable: true } });
const scsi = (name: string) => ({ name, disk: { bus: 'scsi' } });

function spec(volumes: object[] = [root], disks: object[] = [rootDisk]): VirtualMachineInstanceSpec {
  return { domain: { devices: { disks } }, volumes } as VirtualMachineInstanceSpec;
}
const add = (name: string, claim = `${name}-claim`): VirtualMachineVolumeRequest => ({ addVolumeOptions: { name, disk: { name: 'ignored', disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: claim } } } });
const remove = (name: string): VirtualMachineVolumeRequest => ({ removeVolumeOptions: { name } });
const names = (s: VirtualMachineInstanceSpec) => ({ volumes: (s.volumes ?? []).map((v) => v.name), disks: (s.domain.devices.disks ?? []).map((d) => d.name) });

describe('status.volumeRequests', () => {
  test('table: adds append the hotpluggable volume and the disk named after it when absent, removes drop both', () => {
    const cases: { name: string; spec: VirtualMachineInstanceSpec; requests: VirtualMachineVolumeRequest[]; want: { volumes: string[]; disks: string[] } }[] = [
      { name: 'add', spec: spec(), requests: [add('x')], want: { volumes: ['root', 'x'], disks: ['root', 'x'] } },
      { name: 'add twice is one', spec: spec(), requests: [add('x'), add('x')], want: { volumes: ['root', 'x'], disks: ['root', 'x'] } },
      { name: 'add then remove', spec: spec(), requests: [add('x'), remove('x')], want: { volumes: ['root'], disks: ['root'] } },
      { name: 'remove of an absent volume', spec: spec(), requests: [remove('x')], want: { volumes: ['root'], disks: ['root'] } },
      { name: 'add where only the disk exists', spec: spec([root], [rootDisk, scsi('x')]), requests: [add('x')], want: { volumes: ['root', 'x'], disks: ['root', 'x'] } },
    ];
    for (const c of cases) {
      // act
      const got = applyVolumeRequests(c.spec, c.requests);
      // assert
      assert.deepEqual(names(got), c.want, c.name);
    }
  });

  test('the added volume is hotpluggable and its disk carries the request name', () => {
    // act
    const got = applyVolumeRequests(spec(), [add('x')]);
    // assert
    assert.deepEqual(got.volumes?.[1], { name: 'x', persistentVolumeClaim: { claimName: 'x-claim', hotpluggable: true } });
    assert.deepEqual(got.domain.devices.disks?.[1], { name: 'x', disk: { bus: 'scsi' } });
  });

  test('table: the requests a VMI still needs', () => {
    const vmi = (volumes: object[], deleting = false) => ({ metadata: { name: 'a', ...(deleting ? { deletionTimestamp: '2026-12-01T10:00:00Z' } : {}) }, spec: spec(volumes) }) as VirtualMachineInstance;
    const cases: { name: string; vmi: VirtualMachineInstance | undefined; requests: VirtualMachineVolumeRequest[]; want: number }[] = [
      { name: 'no VMI', vmi: undefined, requests: [add('x')], want: 0 },
      { name: 'a deleting VMI', vmi: vmi([root], true), requests: [add('x')], want: 0 },
      { name: 'add, absent from the VMI', vmi: vmi([root]), requests: [add('x')], want: 1 },
      { name: 'add, already there', vmi: vmi([root, hp('x')]), requests: [add('x')], want: 0 },
      { name: 'remove, there', vmi: vmi([root, hp('x')]), requests: [remove('x')], want: 1 },
      { name: 'remove, already gone', vmi: vmi([root]), requests: [remove('x')], want: 0 },
    ];
    for (const c of cases) {
      // act / assert
      assert.equal(vmiVolumeRequests(c.vmi, c.requests).length, c.want, c.name);
    }
  });

  test('table: trimming — an add once the template has its volume and disk, a remove once it has neither', () => {
    const cases: { name: string; spec: VirtualMachineInstanceSpec; requests: VirtualMachineVolumeRequest[]; want: number }[] = [
      { name: 'add reflected', spec: spec([root, hp('x')], [rootDisk, scsi('x')]), requests: [add('x')], want: 0 },
      { name: 'add, disk missing', spec: spec([root, hp('x')]), requests: [add('x')], want: 1 },
      { name: 'remove reflected', spec: spec(), requests: [remove('x')], want: 0 },
      { name: 'remove, disk left', spec: spec([root], [rootDisk, scsi('x')]), requests: [remove('x')], want: 1 },
    ];
    for (const c of cases) {
      // act / assert
      assert.equal(trimVolumeRequests(c.spec, c.requests).length, c.want, c.name);
    }
  });
});

describe('declarative hotplug', () => {
  const vm = (s: VirtualMachineInstanceSpec, updateVolumesStrategy?: string): VirtualMachine => ({ metadata: { name: 'a' }, spec: { template: { spec: s }, ...(updateVolumesStrategy ? { updateVolumesStrategy } : {}) } }) as VirtualMachine;
  const vmi = (s: VirtualMachineInstanceSpec, phase = 'Running', volumeStatus: { name: string; target: string }[] = []): VirtualMachineInstance => ({ metadata: { name: 'a' }, spec: s, status: { phase, volumeStatus } });
  const config = (featureGates: string[] = [], disabledFeatureGates: string[] = []) => clusterConfigFromKubeVirt({ metadata: { name: 'kubevirt' }, spec: { configuration: { developerConfiguration: { featureGates, disabledFeatureGates } } } } as never);

  test('table: only with HotplugVolumes off and DeclarativeHotplugVolumes on, a Running VMI, no Migration strategy', () => {
    const cases = [
      { name: 'defaults', config: config(), vm: vm(spec()), vmi: vmi(spec()), want: true },
      { name: 'legacy gate explicitly on', config: config(['HotplugVolumes']), vm: vm(spec()), vmi: vmi(spec()), want: false },
      { name: 'declarative gate disabled', config: config([], ['DeclarativeHotplugVolumes']), vm: vm(spec()), vmi: vmi(spec()), want: false },
      { name: 'VMI Scheduled', config: config(), vm: vm(spec()), vmi: vmi(spec(), 'Scheduled'), want: false },
      { name: 'no VMI', config: config(), vm: vm(spec()), vmi: undefined, want: false },
      { name: 'updateVolumesStrategy Migration', config: config(), vm: vm(spec(), 'Migration'), vmi: vmi(spec()), want: false },
    ];
    for (const c of cases) {
      // act / assert
      assert.equal(declarativeHotplugApplies(c.vm, c.vmi, c.config), c.want, c.name);
    }
  });

  test('table: template hotpluggable volumes come into the VMI with their disks, removed or changed ones go', () => {
    const cdrom = (name: string) => ({ name, cdrom: { bus: 'sata' } });
    const cases: { name: string; template: VirtualMachineInstanceSpec; vmi: VirtualMachineInstanceSpec; status?: { name: string; target: string }[]; want?: { volumes: string[]; disks: string[] } }[] = [
      { name: 'in step', template: spec([root, hp('x')], [rootDisk, scsi('x')]), vmi: spec([root, hp('x')], [rootDisk, scsi('x')]) },
      { name: 'added to the template', template: spec([root, hp('x')], [rootDisk, scsi('x')]), vmi: spec(), want: { volumes: ['root', 'x'], disks: ['root', 'x'] } },
      { name: 'an unplug still in progress blocks the re-add', template: spec([root, hp('x')], [rootDisk, scsi('x')]), vmi: spec(), status: [{ name: 'x', target: '' }] },
      { name: 'removed from the template', template: spec(), vmi: spec([root, hp('x')], [rootDisk, scsi('x')]), want: { volumes: ['root'], disks: ['root'] } },
      { name: 'changed in the template: out now, back in once unplugged', template: spec([root, hp('x', 'other')], [rootDisk, scsi('x')]), vmi: spec([root, hp('x')], [rootDisk, scsi('x')]), want: { volumes: ['root'], disks: ['root'] } },
      { name: 'a non-hotpluggable volume is never touched', template: spec(), vmi: spec([root, { name: 'y', persistentVolumeClaim: { claimName: 'y' } }], [rootDisk, scsi('y')]) },
      { name: 'a CD-ROM eject keeps the drive', template: spec([root], [rootDisk, cdrom('x')]), vmi: spec([root, hp('x')], [rootDisk, cdrom('x')]), want: { volumes: ['root'], disks: ['root', 'x'] } },
    ];
    for (const c of cases) {
      // act
      const got = declarativeVolumeChange(vm(c.template), vmi(c.vmi, 'Running', c.status));
      // assert
      assert.deepEqual(got && { volumes: got.volumes.map((v) => v.name), disks: got.disks.map((d) => d.name) }, c.want, c.name);
    }
  });
});
