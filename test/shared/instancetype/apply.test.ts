import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstanceSpec, VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from '../../../shared/api/index.ts';
import { applyInstancetype, cpuTopology, vmConflictMessage, vmiConflictMessage } from '../../../shared/instancetype/apply-instancetype.ts';
import { applyAutoattachPreferences, applyPreference } from '../../../shared/instancetype/apply-preference.ts';

const IT: VirtualMachineInstancetypeSpec = { cpu: { guest: 2 }, memory: { guest: '1Gi' } };

function spec(domain: Partial<VirtualMachineInstanceSpec['domain']> = {}, rest: Partial<VirtualMachineInstanceSpec> = {}): VirtualMachineInstanceSpec {
  return { domain: { devices: {}, ...domain }, ...rest };
}

describe('applyInstancetype: conflicts, in KubeVirt order', () => {
  const cases: [string, VirtualMachineInstancetypeSpec, VirtualMachineInstanceSpec, Record<string, string>, string[]][] = [
    ['nothing set by the VM → applies', IT, spec(), {}, []],
    ['cpu.sockets set', IT, spec({ cpu: { sockets: 2 } }), {}, ['spec.domain.cpu.sockets']],
    ['cpu requests and limits, cores, threads', IT, spec({ cpu: { cores: 1, threads: 2 }, resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }), {}, [
      'spec.domain.resources.requests.cpu',
      'spec.domain.resources.limits.cpu',
      'spec.domain.cpu.cores',
      'spec.domain.cpu.threads',
    ]],
    ['cpu.model only when the instance type sets one', { ...IT, cpu: { guest: 2, model: 'host-passthrough' } }, spec({ cpu: { model: 'Haswell' } }), {}, ['spec.domain.cpu.model']],
    ['cpu.model of the VM alone is no conflict', IT, spec({ cpu: { model: 'Haswell' } }), {}, []],
    ['dedicatedCPUPlacement both set', { ...IT, cpu: { guest: 2, dedicatedCPUPlacement: true } }, spec({ cpu: { dedicatedCpuPlacement: true } }), {}, ['spec.domain.cpu.dedicatedCPUPlacement']],
    ['memory.guest set', IT, spec({ memory: { guest: '2Gi' } }), {}, ['spec.domain.memory.guest']],
    ['memory: only the first of requests / limits', IT, spec({ resources: { requests: { memory: '1Gi' }, limits: { memory: '1Gi' } } }), {}, ['spec.domain.resources.requests.memory']],
    ['memory: hugepages both set comes before requests', { ...IT, memory: { guest: '1Gi', hugepages: { pageSize: '2Mi' } } }, spec({ memory: { hugepages: { pageSize: '1Gi' } }, resources: { requests: { memory: '1Gi' } } }), {}, ['spec.domain.memory.hugepages']],
    ['nodeSelector and schedulerName first', { ...IT, nodeSelector: { a: 'b' }, schedulerName: 's' }, spec({ cpu: { sockets: 1 } }, { nodeSelector: {}, schedulerName: 'x' }), {}, ['spec.nodeSelector', 'spec.schedulerName', 'spec.domain.cpu.sockets']],
    ['ioThreadsPolicy, launchSecurity, gpus, hostDevices', { ...IT, ioThreadsPolicy: 'auto', launchSecurity: {}, gpus: [{ name: 'g', deviceName: 'd' }], hostDevices: [{ name: 'h', deviceName: 'd' }] },
      spec({ ioThreadsPolicy: 'shared', launchSecurity: {}, devices: { gpus: [{ name: 'x', deviceName: 'y' }], hostDevices: [{ name: 'x', deviceName: 'y' }] } }), {},
      ['spec.domain.ioThreadsPolicy', 'spec.domain.launchSecurity', 'spec.domain.devices.gpus', 'spec.domain.devices.hostDevices']],
    ['an annotation of another value; the same value is fine', { ...IT, annotations: { a: '1', b: '2' } }, spec(), { a: '1', b: '3' }, ['annotations.b']],
  ];
  for (const [name, it, s, annotations, want] of cases) {
    test(name, () => {
      // act
      const got = applyInstancetype('spec', it, undefined, s, annotations);
      // assert
      assert.deepEqual(got.conflicts, want);
      if (want.length > 0) assert.deepEqual(got.spec, s, 'nothing is applied on a conflict');
    });
  }

  test('the template base path prefixes every spec path (annotations keep none)', () => {
    // act
    const got = applyInstancetype('spec.template.spec', { ...IT, annotations: { a: '1' } }, undefined, spec({ cpu: { cores: 2 } }), { a: '2' });
    // assert
    assert.deepEqual(got.conflicts, ['spec.template.spec.domain.cpu.cores', 'annotations.a']);
    assert.equal(vmConflictMessage(got.conflicts), 'VM field(s) spec.template.spec.domain.cpu.cores, annotations.a conflicts with selected instance type');
    assert.equal(vmiConflictMessage(['spec.domain.cpu.sockets']), 'VMI conflicts with instancetype spec in fields: [spec.domain.cpu.sockets]');
  });

  test('applied: topology, guest memory, copied fields, annotations', () => {
    // arrange
    const it: VirtualMachineInstancetypeSpec = {
      cpu: { guest: 4, model: 'host-passthrough', dedicatedCPUPlacement: true, maxSockets: 8 },
      memory: { guest: '2Gi', maxGuest: '8Gi' },
      nodeSelector: { zone: 'a' },
      ioThreadsPolicy: 'auto',
      annotations: { 'example.com/it': 'yes' },
    };
    // act
    const got = applyInstancetype('spec', it, undefined, spec({ cpu: { features: [{ name: 'x' }] } }), { keep: 'me' });
    // assert
    assert.deepEqual(got.conflicts, []);
    assert.deepEqual(got.spec.domain.cpu, { features: [{ name: 'x' }], model: 'host-passthrough', dedicatedCpuPlacement: true, maxSockets: 8, sockets: 4, cores: 1, threads: 1 });
    assert.deepEqual(got.spec.domain.memory, { guest: '2Gi', maxGuest: '8Gi' });
    assert.deepEqual(got.spec.nodeSelector, { zone: 'a' });
    assert.equal(got.spec.domain.ioThreadsPolicy, 'auto');
    assert.deepEqual(got.annotations, { keep: 'me', 'example.com/it': 'yes' });
  });

  test('overcommitPercent lowers the memory request, in float32 arithmetic', () => {
    // act
    const got = applyInstancetype('spec', { cpu: { guest: 1 }, memory: { guest: '1Gi', overcommitPercent: 15 } }, undefined, spec());
    // assert: int64(float32(1073741824) × float32(0.85)) = 912680576
    assert.deepEqual(got.spec.domain.resources?.requests, { memory: String(Math.trunc(Math.fround(1073741824 * Math.fround(1 - Math.fround(0.15))))) });
    assert.equal(got.spec.domain.resources?.requests?.['memory'], '912680576');
  });
});

describe('cpuTopology: preferredCPUTopology', () => {
  const pref = (cpu: VirtualMachinePreferenceSpec['cpu'], ratio?: number): VirtualMachinePreferenceSpec => ({ cpu, ...(ratio ? { preferSpreadSocketToCoreRatio: ratio } : {}) });
  const cases: [string, number, VirtualMachinePreferenceSpec | undefined, [number, number, number]][] = [
    ['1 vCPU is always 1/1/1', 1, pref({ preferredCPUTopology: 'cores' }), [1, 1, 1]],
    ['default sockets', 4, undefined, [4, 1, 1]],
    ['preferSockets', 4, pref({ preferredCPUTopology: 'preferSockets' }), [4, 1, 1]],
    ['any', 4, pref({ preferredCPUTopology: 'any' }), [4, 1, 1]],
    ['cores', 4, pref({ preferredCPUTopology: 'cores' }), [1, 4, 1]],
    ['preferThreads', 4, pref({ preferredCPUTopology: 'preferThreads' }), [1, 1, 4]],
    ['spread: ratio 2 by default, SocketsCores', 8, pref({ preferredCPUTopology: 'spread' }), [4, 2, 1]],
    ['spread: preferSpreadSocketToCoreRatio', 12, pref({ preferredCPUTopology: 'preferSpread' }, 3), [4, 3, 1]],
    ['spread: spreadOptions.ratio wins', 12, pref({ preferredCPUTopology: 'spread', spreadOptions: { ratio: 4 } }, 3), [3, 4, 1]],
    ['spread CoresThreads', 8, pref({ preferredCPUTopology: 'spread', spreadOptions: { across: 'CoresThreads' } }), [1, 4, 2]],
    ['spread SocketsCoresThreads', 16, pref({ preferredCPUTopology: 'spread', spreadOptions: { across: 'SocketsCoresThreads', ratio: 2 } }), [4, 2, 2]],
    ['integer division', 7, pref({ preferredCPUTopology: 'spread' }), [3, 2, 1]],
  ];
  for (const [name, vcpus, p, [sockets, cores, threads]] of cases) {
    test(name, () => {
      // act + assert
      assert.deepEqual(cpuTopology(vcpus, p), { sockets, cores, threads });
    });
  }
});

describe('applyPreference: fills only what is unset', () => {
  const cases: [string, VirtualMachinePreferenceSpec, VirtualMachineInstanceSpec, (s: VirtualMachineInstanceSpec) => unknown, unknown][] = [
    ['disk bus on a disk without one; a disk with no target gets disk: {}', { devices: { preferredDiskBus: 'sata' } },
      spec({ devices: { disks: [{ name: 'a' }, { name: 'b', disk: { bus: 'virtio' } }] } }), (s) => s.domain.devices.disks, [{ name: 'a', disk: { bus: 'sata' } }, { name: 'b', disk: { bus: 'virtio' } }]],
    ['dedicatedIOThread only on virtio disks', { devices: { preferredDiskDedicatedIoThread: true } },
      spec({ devices: { disks: [{ name: 'a', disk: { bus: 'virtio' } }, { name: 'b', disk: { bus: 'sata' } }] } }), (s) => s.domain.devices.disks?.map((d) => d.dedicatedIOThread), [true, undefined]],
    ['cdrom and lun bus', { devices: { preferredCdromBus: 'sata', preferredLunBus: 'scsi' } },
      spec({ devices: { disks: [{ name: 'c', cdrom: {} }, { name: 'l', lun: {} }] } }), (s) => s.domain.devices.disks, [{ name: 'c', cdrom: { bus: 'sata' } }, { name: 'l', lun: { bus: 'scsi' } }]],
    ['interface model; masquerade only unbound on the pod network', { devices: { preferredInterfaceModel: 'e1000', preferredInterfaceMasquerade: {} } },
      spec({ devices: { interfaces: [{ name: 'pod' }, { name: 'multus' }, { name: 'br', bridge: {} }] } }, { networks: [{ name: 'pod', pod: {} }, { name: 'multus', multus: { networkName: 'n' } }, { name: 'br', pod: {} }] }),
      (s) => s.domain.devices.interfaces, [{ name: 'pod', model: 'e1000', masquerade: {} }, { name: 'multus', model: 'e1000' }, { name: 'br', bridge: {}, model: 'e1000' }]],
    ['a set interface model is kept', { devices: { preferredInterfaceModel: 'e1000' } }, spec({ devices: { interfaces: [{ name: 'x', model: 'virtio' }] } }), (s) => s.domain.devices.interfaces?.[0]?.model, 'virtio'],
    ['input bus and type', { devices: { preferredInputBus: 'virtio', preferredInputType: 'tablet' } }, spec({ devices: { inputs: [{ name: 'i', type: '' }] } }), (s) => s.domain.devices.inputs, [{ name: 'i', type: 'tablet', bus: 'virtio' }]],
    ['disableHotplug is overwritten', { devices: { preferredDisableHotplug: true } }, spec({ devices: { disableHotplug: false } }), (s) => s.domain.devices.disableHotplug, true],
    ['sound model only with a sound device', { devices: { preferredSoundModel: 'ich9' } }, spec(), (s) => s.domain.devices.sound, undefined],
    ['video type creates video', { devices: { preferredVideoType: 'virtio' } }, spec(), (s) => s.domain.devices.video, { type: 'virtio' }],
    ['firmware: EFI when neither is set, bootloader created', { firmware: { preferredUseEfi: true, preferredUseSecureBoot: false } }, spec(), (s) => s.domain.firmware, { bootloader: { efi: { secureBoot: false } } }],
    ['firmware: BIOS set by the VM is kept', { firmware: { preferredUseEfi: true } }, spec({ firmware: { bootloader: { bios: {} } } }), (s) => s.domain.firmware, { bootloader: { bios: {} } }],
    ['firmware: preferredEfi wins over the deprecated flags', { firmware: { preferredEfi: { persistent: true }, preferredUseBios: true } }, spec(), (s) => s.domain.firmware?.bootloader, { efi: { persistent: true } }],
    ['a firmware preference always creates the bootloader', { firmware: { preferredUseSecureBoot: true } }, spec(), (s) => s.domain.firmware, { bootloader: {} }],
    ['machine type', { machine: { preferredMachineType: 'q35' } }, spec(), (s) => s.domain.machine, { type: 'q35' }],
    ['clock offset only when none is set', { clock: { preferredClockOffset: { utc: {} } } }, spec({ clock: { timezone: 'Europe/Paris' } }), (s) => s.domain.clock, { timezone: 'Europe/Paris' }],
    ['cpu features appended when absent by name', { cpu: { preferredCPUFeatures: [{ name: 'a', policy: 'require' }, { name: 'b' }] } }, spec({ cpu: { features: [{ name: 'a' }] } }), (s) => s.domain.cpu?.features, [{ name: 'a' }, { name: 'b' }]],
    ['features: each unset one', { features: { preferredSmm: {}, preferredApic: { enabled: true } } }, spec({ features: { smm: { enabled: false } } }), (s) => s.domain.features, { smm: { enabled: false }, apic: { enabled: true } }],
    ['subdomain, grace period, architecture', { preferredSubdomain: 'sub', preferredTerminationGracePeriodSeconds: 10, preferredArchitecture: 'arm64' }, spec({}, { terminationGracePeriodSeconds: 0 }),
      (s) => [s.subdomain, s.terminationGracePeriodSeconds, s.architecture], ['sub', 0, 'arm64']],
  ];
  for (const [name, p, s, pick, want] of cases) {
    test(name, () => {
      // act
      const got = applyPreference(p, s);
      // assert
      assert.deepEqual(pick(got.spec), want);
    });
  }

  test('annotations only where the key is missing', () => {
    // act
    const got = applyPreference({ annotations: { a: 'pref', b: 'pref' } }, spec(), { a: 'vm' });
    // assert
    assert.deepEqual(got.annotations, { a: 'vm', b: 'pref' });
  });

  test('autoattach preferences only where unset', () => {
    // arrange
    const s = spec({ devices: { autoattachSerialConsole: true } });
    // act
    applyAutoattachPreferences({ devices: { preferredAutoattachSerialConsole: false, preferredAutoattachPodInterface: false, preferredAutoattachInputDevice: true } }, s);
    // assert
    assert.deepEqual(s.domain.devices, { autoattachSerialConsole: true, autoattachPodInterface: false, autoattachInputDevice: true });
  });
});
