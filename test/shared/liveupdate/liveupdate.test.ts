/**
 * The shared live-update pieces (reference-vm-vmi-depth §5), table-driven: the hotplug defaults
 * KubeVirt's VMI webhook applies, `ValidateLiveUpdateMemory`'s checks in order, and the hotplug
 * condition predicates the VMI, workload-update and migration controllers share.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeVirt, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { applyHotplugDefaults, defaultMaxSockets } from '../../../shared/liveupdate/defaults.ts';
import { cpuHotplugPending, isHotplugInProgress, memoryHotplugPending, vcpuCount } from '../../../shared/liveupdate/hotplug-conditions.ts';
import { liveUpdateMemoryProblem } from '../../../shared/liveupdate/memory.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';

const kv = (configuration: Record<string, unknown>): KubeVirt => ({ apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt' }, spec: { configuration } }) as KubeVirt;
const vmi = (domain: Record<string, unknown>, extra: Record<string, unknown> = {}, status: Record<string, unknown> = {}): VirtualMachineInstance =>
  ({ metadata: { name: 'v' }, spec: { domain: { devices: {}, ...domain }, ...extra }, status }) as VirtualMachineInstance;

describe('hotplug defaults (the VMI webhook)', () => {
  test('table: maxSockets from maxCpuSockets, else sockets × ratio (4 by default, with or without liveUpdateConfiguration, as the KubeVirt configuration defaults), capped at 512 vCPUs, never below sockets', () => {
    const cases: { name: string; config: Record<string, unknown>; sockets: number; cores: number; want: number }[] = [
      { name: 'no liveUpdateConfiguration: the default ratio 4', config: {}, sockets: 2, cores: 1, want: 8 },
      { name: 'liveUpdateConfiguration without a ratio: 4', config: { liveUpdateConfiguration: {} }, sockets: 2, cores: 1, want: 8 },
      { name: 'ratio 3', config: { liveUpdateConfiguration: { maxHotplugRatio: 3 } }, sockets: 2, cores: 1, want: 6 },
      { name: 'maxCpuSockets', config: { liveUpdateConfiguration: { maxCpuSockets: 6 } }, sockets: 2, cores: 1, want: 6 },
      { name: 'maxCpuSockets below sockets', config: { liveUpdateConfiguration: { maxCpuSockets: 2 } }, sockets: 4, cores: 1, want: 4 },
      { name: 'capped at 512 vCPUs', config: { liveUpdateConfiguration: {} }, sockets: 100, cores: 2, want: 256 },
      { name: 'the cap never goes below sockets', config: { liveUpdateConfiguration: {} }, sockets: 300, cores: 2, want: 300 },
    ];
    for (const c of cases) {
      // act
      const got = defaultMaxSockets(c.sockets, c.cores, 1, clusterConfigFromKubeVirt(kv(c.config)));
      // assert
      assert.equal(got, c.want, c.name);
    }
  });

  test('table: what the defaults add to a VMI', () => {
    const live = clusterConfigFromKubeVirt(kv({ liveUpdateConfiguration: { maxHotplugRatio: 4 } }));
    const cases: { name: string; config?: ReturnType<typeof clusterConfigFromKubeVirt>; vmi: VirtualMachineInstance; want: { maxSockets?: number; maxGuest?: string; status: Record<string, unknown> } }[] = [
      { name: 'topology and guest', vmi: vmi({ cpu: { sockets: 1 }, memory: { guest: '2Gi' } }), want: { maxSockets: 4, maxGuest: '8Gi', status: { memory: { guestAtBoot: '2Gi', guestCurrent: '2Gi', guestRequested: '2Gi' }, currentCPUTopology: { sockets: 1, cores: 1, threads: 1 } } } },
      { name: 'the config maxGuest', config: clusterConfigFromKubeVirt(kv({ liveUpdateConfiguration: { maxGuest: '6Gi' } })), vmi: vmi({ memory: { guest: '2Gi' } }), want: { maxGuest: '6Gi', status: { memory: { guestAtBoot: '2Gi', guestCurrent: '2Gi', guestRequested: '2Gi' } } } },
      { name: 'a maxGuest that fails validation is dropped (guest < 1Gi)', vmi: vmi({ memory: { guest: '512Mi' } }), want: { status: { memory: { guestAtBoot: '512Mi', guestCurrent: '512Mi', guestRequested: '512Mi' } } } },
      { name: 'Stage: no maxima', config: clusterConfigFromKubeVirt(kv({ vmRolloutStrategy: 'Stage' })), vmi: vmi({ cpu: { sockets: 2 } }), want: { status: { currentCPUTopology: { sockets: 2, cores: 1, threads: 1 } } } },
      { name: 'arm64: no maxima', vmi: vmi({ cpu: { sockets: 2 } }, { architecture: 'arm64' }), want: { status: { currentCPUTopology: { sockets: 2, cores: 1, threads: 1 } } } },
      { name: 'no topology: nothing for the CPU', vmi: vmi({}), want: { status: {} } },
      { name: 'a set maxSockets is kept', vmi: vmi({ cpu: { sockets: 1, maxSockets: 2 } }), want: { maxSockets: 2, status: { currentCPUTopology: { sockets: 1, cores: 1, threads: 1 } } } },
    ];
    for (const c of cases) {
      // act
      const got = applyHotplugDefaults(c.vmi, c.config ?? live);
      // assert
      assert.equal(got.spec.domain.cpu?.maxSockets, c.want.maxSockets, `${c.name}: maxSockets`);
      assert.equal(got.spec.domain.memory?.maxGuest, c.want.maxGuest, `${c.name}: maxGuest`);
      assert.deepEqual(got.status, c.want.status, `${c.name}: status`);
      assert.equal(c.vmi.spec.domain.cpu?.maxSockets ?? undefined, c.name === 'a set maxSockets is kept' ? 2 : undefined, 'the input is not touched');
    }
  });
});

describe('ValidateLiveUpdateMemory', () => {
  test('table: the checks in order', () => {
    const s = (domain: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ domain: { devices: {}, ...domain }, ...extra }) as VirtualMachineInstanceSpec;
    const cases: { name: string; spec: VirtualMachineInstanceSpec; max: string | undefined; want: string | undefined }[] = [
      { name: 'valid', spec: s({ memory: { guest: '2Gi' } }), max: '8Gi', want: undefined },
      { name: 'realtime before anything', spec: s({ cpu: { realtime: {} } }), max: undefined, want: 'Memory hotplug is not compatible with realtime VMs' },
      { name: 'NUMA passthrough', spec: s({ cpu: { numa: { guestMappingPassthrough: {} } } }), max: undefined, want: 'Memory hotplug is not compatible with guest mapping passthrough' },
      { name: 'launchSecurity', spec: s({ launchSecurity: { sev: {} } }), max: undefined, want: 'Memory hotplug is not compatible with encrypted VMs' },
      { name: 'no guest', spec: s({}), max: '8Gi', want: 'Guest memory must be set when memory hotplug is enabled' },
      { name: 'no maxGuest', spec: s({ memory: { guest: '2Gi' } }), max: undefined, want: 'Guest memory must be set when memory hotplug is enabled' },
      { name: 'guest above maxGuest', spec: s({ memory: { guest: '9Gi' } }), max: '8Gi', want: 'Guest memory cannot be higher than maxGuest' },
      { name: 'guest not 2Mi aligned', spec: s({ memory: { guest: '2049Mi' } }), max: '8Gi', want: 'Guest memory must be 2Mi aligned' },
      { name: 'maxGuest not 2Mi aligned', spec: s({ memory: { guest: '2Gi' } }), max: '8193Mi', want: 'MaxGuest must be 2Mi aligned' },
      { name: '1Gi hugepages: 1Gi alignment', spec: s({ memory: { guest: '2050Mi', hugepages: { pageSize: '1Gi' } } }), max: '8Gi', want: 'Guest memory must be 1Gi aligned' },
      { name: 'arm64', spec: s({ memory: { guest: '2Gi' } }, { architecture: 'arm64' }), max: '8Gi', want: 'Memory hotplug is only available for x86_64 VMs' },
      { name: 'below 1Gi', spec: s({ memory: { guest: '512Mi' } }), max: '8Gi', want: 'Memory hotplug is only available for VMs with at least 1Gi of guest memory' },
    ];
    for (const c of cases) {
      // act + assert
      assert.equal(liveUpdateMemoryProblem(c.spec, c.max), c.want, c.name);
    }
  });
});

describe('hotplug conditions', () => {
  test('table: pending CPU / memory hotplug and "in progress"', () => {
    const c = (type: string, status = 'True') => ({ type, status });
    const cases: { name: string; vmi: VirtualMachineInstance; cpu: boolean; memory: boolean; inProgress: boolean }[] = [
      { name: 'nothing', vmi: vmi({ cpu: { sockets: 2, maxSockets: 4 }, memory: { guest: '2Gi', maxGuest: '8Gi' } }, {}, { currentCPUTopology: { sockets: 2, cores: 1, threads: 1 }, memory: { guestRequested: '2048Mi' } }), cpu: false, memory: false, inProgress: false },
      { name: 'sockets raised', vmi: vmi({ cpu: { sockets: 3, maxSockets: 4 } }, {}, { currentCPUTopology: { sockets: 2, cores: 1, threads: 1 } }), cpu: true, memory: false, inProgress: false },
      { name: 'maxSockets 0: never', vmi: vmi({ cpu: { sockets: 3 } }, {}, { currentCPUTopology: { sockets: 2 } }), cpu: false, memory: false, inProgress: false },
      { name: 'guest raised', vmi: vmi({ memory: { guest: '4Gi', maxGuest: '8Gi' } }, {}, { memory: { guestRequested: '2Gi' } }), cpu: false, memory: true, inProgress: false },
      { name: 'no maxGuest: never', vmi: vmi({ memory: { guest: '4Gi' } }, {}, { memory: { guestRequested: '2Gi' } }), cpu: false, memory: false, inProgress: false },
      { name: 'HotVCPUChange False still counts', vmi: vmi({}, {}, { conditions: [c('HotVCPUChange', 'False')] }), cpu: false, memory: false, inProgress: true },
      { name: 'HotMemoryChange False does not', vmi: vmi({}, {}, { conditions: [c('HotMemoryChange', 'False')] }), cpu: false, memory: false, inProgress: false },
      { name: 'MigrationRequired True', vmi: vmi({}, {}, { conditions: [c('MigrationRequired')] }), cpu: false, memory: false, inProgress: true },
    ];
    for (const t of cases) {
      // act + assert
      assert.equal(cpuHotplugPending(t.vmi), t.cpu, `${t.name}: cpu`);
      assert.equal(memoryHotplugPending(t.vmi), t.memory, `${t.name}: memory`);
      assert.equal(isHotplugInProgress(t.vmi), t.inProgress, `${t.name}: in progress`);
    }
    assert.equal(vcpuCount({ sockets: 2, cores: 0, threads: 2 }), 4, 'an unset factor counts 1');
  });
});
