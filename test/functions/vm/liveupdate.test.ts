/**
 * The VM controller's live-update decisions, table-driven against reference-vm-vmi-depth §5: CPU
 * and memory hotplug (the checks in KubeVirt's order, the patches and their quantities),
 * affinity / nodeSelector / tolerations, `syncRestartRequired`'s comparison, and the start
 * revision's generation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../../shared/api/index.ts';
import { cpuChange } from '../../../functions/vm/liveupdate/cpu-hotplug.ts';
import { memoryChange } from '../../../functions/vm/liveupdate/memory-hotplug.ts';
import { affinityChanges, tolerationsChange } from '../../../functions/vm/liveupdate/placement.ts';
import { restartRequired } from '../../../functions/vm/liveupdate/restart-required.ts';
import { revisionGeneration } from '../../../functions/vm/generation-annotation.ts';
import type { LiveChange } from '../../../functions/vm/liveupdate/change.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const cond = (type: string, status = 'True') => ({ type, status });
type Patch = { spec?: Record<string, unknown>; domain?: Record<string, unknown>; status?: Record<string, unknown>; deleting?: boolean };

function spec(domain: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): VirtualMachineInstanceSpec {
  return { domain: { devices: {}, ...domain }, ...extra } as VirtualMachineInstanceSpec;
}
function vmi(p: Patch = {}): VirtualMachineInstance {
  return {
    metadata: { name: 'v', namespace: 'default', ...(p.deleting ? { deletionTimestamp: '2026-03-01T11:00:00Z' } : {}) },
    spec: spec(p.domain, p.spec),
    status: { phase: 'Running', ...p.status },
  } as VirtualMachineInstance;
}
const migrating = { migrationState: { startTimestamp: '2026-03-01T11:59:00Z' } };
const kindOf = (c: LiveChange) => (c.kind === 'restart' || c.kind === 'error' ? `${c.kind}: ${c.message}` : c.kind);

describe('CPU hotplug', () => {
  const cpu = (sockets: number, maxSockets?: number) => ({ cpu: { sockets, cores: 1, threads: 1, ...(maxSockets !== undefined ? { maxSockets } : {}) } });
  test('table: the checks in order', () => {
    const cases: { name: string; template: VirtualMachineInstanceSpec; vmi: VirtualMachineInstance; want: string }[] = [
      { name: 'equal sockets', template: spec(cpu(2)), vmi: vmi({ domain: cpu(2, 4), status: { conditions: [cond('HotVCPUChange')] } }), want: 'none' },
      { name: 'no cpu in the template', template: spec(), vmi: vmi({ domain: cpu(1, 4) }), want: 'none' },
      { name: 'no cpu on the VMI', template: spec(cpu(2)), vmi: vmi(), want: 'none' },
      { name: 'VMI being deleted', template: spec(cpu(2)), vmi: vmi({ domain: cpu(1, 4), deleting: true }), want: 'none' },
      { name: 'hotplug in progress', template: spec(cpu(2)), vmi: vmi({ domain: cpu(1, 4), status: { conditions: [cond('HotVCPUChange')] } }), want: 'error: another CPU hotplug is in progress' },
      { name: 'HotVCPUChange False is no hotplug in progress', template: spec(cpu(2)), vmi: vmi({ domain: cpu(1, 4), status: { conditions: [cond('HotVCPUChange', 'False')] } }), want: 'patch' },
      { name: 'migrating', template: spec(cpu(2)), vmi: vmi({ domain: cpu(1, 4), status: migrating }), want: 'error: CPU hotplug is not allowed while VMI is migrating' },
      { name: 'above maxSockets', template: spec(cpu(5)), vmi: vmi({ domain: cpu(1, 4) }), want: "restart: CPU sockets updated in template spec to a value higher than what's available" },
      { name: 'maxSockets 0: a reduction lands on the maximum rule first', template: spec(cpu(1)), vmi: vmi({ domain: cpu(2, 0) }), want: "restart: CPU sockets updated in template spec to a value higher than what's available" },
      { name: 'reduction', template: spec(cpu(1)), vmi: vmi({ domain: cpu(2, 4) }), want: 'restart: Reduction of CPU socket count requires a restart' },
      { name: 'arm64', template: spec(cpu(2), { architecture: 'arm64' }), vmi: vmi({ domain: cpu(1, 4) }), want: "restart: ARM doesn't support CPU hotplug" },
      { name: 'raise within maxSockets', template: spec(cpu(4)), vmi: vmi({ domain: cpu(1, 4) }), want: 'patch' },
    ];
    for (const c of cases) {
      // act
      const got = cpuChange({ template: c.template, vmi: c.vmi, cpuAllocationRatio: 10, now: NOW });
      // assert
      assert.equal(kindOf(got), c.want, c.name);
    }
  });

  test('table: the patch tests and replaces sockets, and the cpu request/limit the template sets, by delta × int(1000/ratio) millicores', () => {
    const cases: { name: string; template: Record<string, unknown>; vmiDomain: Record<string, unknown>; ratio: number; want: unknown[] }[] = [
      {
        name: 'no cpu resources in the template: sockets only',
        template: { cpu: { sockets: 2 } },
        vmiDomain: { cpu: { sockets: 1, maxSockets: 4 }, resources: { requests: { cpu: '100m' } } },
        ratio: 10,
        want: [{ op: 'test', path: '/spec/domain/cpu/sockets', value: 1 }, { op: 'replace', path: '/spec/domain/cpu/sockets', value: 2 }],
      },
      {
        name: 'request 100m + 1 vCPU at ratio 10 = 200m',
        template: { cpu: { sockets: 2 }, resources: { requests: { cpu: '100m' } } },
        vmiDomain: { cpu: { sockets: 1, maxSockets: 4 }, resources: { requests: { cpu: '100m' } } },
        ratio: 10,
        want: [
          { op: 'test', path: '/spec/domain/cpu/sockets', value: 1 }, { op: 'replace', path: '/spec/domain/cpu/sockets', value: 2 },
          { op: 'test', path: '/spec/domain/resources/requests/cpu', value: '100m' }, { op: 'replace', path: '/spec/domain/resources/requests/cpu', value: '200m' },
        ],
      },
      {
        name: 'request and limit, 2 cores per socket, ratio 3 (333m per vCPU)',
        template: { cpu: { sockets: 2, cores: 2 }, resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } },
        vmiDomain: { cpu: { sockets: 1, cores: 2, maxSockets: 4 }, resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } },
        ratio: 3,
        want: [
          { op: 'test', path: '/spec/domain/cpu/sockets', value: 1 }, { op: 'replace', path: '/spec/domain/cpu/sockets', value: 2 },
          { op: 'test', path: '/spec/domain/resources/requests/cpu', value: '1' }, { op: 'replace', path: '/spec/domain/resources/requests/cpu', value: '1666m' },
          { op: 'test', path: '/spec/domain/resources/limits/cpu', value: '2' }, { op: 'replace', path: '/spec/domain/resources/limits/cpu', value: '2666m' },
        ],
      },
    ];
    for (const c of cases) {
      // act
      const got = cpuChange({ template: spec(c.template), vmi: vmi({ domain: c.vmiDomain }), cpuAllocationRatio: c.ratio, now: NOW });
      // assert
      assert.equal(got.kind, 'patch', c.name);
      assert.deepEqual(got.kind === 'patch' ? got.ops : [], c.want, c.name);
    }
  });
});

describe('memory hotplug', () => {
  const mem = (guest: string, maxGuest?: string) => ({ memory: { guest, ...(maxGuest ? { maxGuest } : {}) } });
  const running = (extra: Record<string, unknown> = {}) => ({ conditions: [cond('LiveMigratable')], memory: { guestAtBoot: '2Gi', guestCurrent: '2Gi', guestRequested: '2Gi' }, ...extra });
  test('table: the checks in order', () => {
    const cases: { name: string; template: VirtualMachineInstanceSpec; vmi: VirtualMachineInstance; want: string }[] = [
      { name: 'no guest in the template', template: spec(), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'none' },
      { name: 'no guestCurrent', template: spec(mem('4Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi') }), want: 'none' },
      { name: 'a failed hotplug, before the equality check', template: spec(mem('2Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running({ conditions: [cond('LiveMigratable'), cond('HotMemoryChange', 'False')] }) }), want: 'restart: memory updated in template spec. Memory-hotplug failed and is not available for this VM configuration' },
      { name: 'equal guest', template: spec(mem('2048Mi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'none' },
      { name: 'not migratable', template: spec(mem('4Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running({ conditions: [] }) }), want: 'restart: memory updated in template spec. Memory-hotplug is only available for migratable VMs' },
      { name: 'no maxGuest', template: spec(mem('4Gi')), vmi: vmi({ domain: mem('2Gi'), status: running() }), want: 'restart: memory updated in template spec. Memory-hotplug is not available for this VM configuration' },
      { name: 'in progress', template: spec(mem('4Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running({ conditions: [cond('LiveMigratable'), cond('HotMemoryChange')] }) }), want: 'error: another memory hotplug is in progress' },
      { name: 'migrating', template: spec(mem('4Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running(migrating) }), want: 'error: memory hotplug is not allowed while VMI is migrating' },
      { name: 'realtime', template: spec({ ...mem('4Gi'), cpu: { realtime: {} } }), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'restart: memory hotplug not supported, Memory hotplug is not compatible with realtime VMs' },
      { name: 'not 2Mi aligned', template: spec(mem('3073Mi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'restart: memory hotplug not supported, Guest memory must be 2Mi aligned' },
      { name: 'above maxGuest (validation first)', template: spec(mem('16Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'restart: memory hotplug not supported, Guest memory cannot be higher than maxGuest' },
      { name: 'arm64', template: spec(mem('4Gi'), { architecture: 'arm64' }), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'restart: memory hotplug not supported, Memory hotplug is only available for x86_64 VMs' },
      { name: 'below what it booted with', template: spec(mem('1Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'restart: memory updated in template spec to a value lower than what the VM started with' },
      { name: 'raise', template: spec(mem('4Gi')), vmi: vmi({ domain: mem('2Gi', '8Gi'), status: running() }), want: 'patch' },
    ];
    for (const c of cases) {
      // act
      const got = memoryChange({ template: c.template, vmi: c.vmi, now: NOW, defaultArchitecture: 'amd64' });
      // assert
      assert.equal(kindOf(got), c.want, c.name);
    }
  });

  test('table: guest, request raised by the delta (at least to the guest), limit by the delta actually used; BinarySI', () => {
    const cases: { name: string; template: Record<string, unknown>; vmiDomain: Record<string, unknown>; current: string; want: unknown[] }[] = [
      {
        name: 'request + delta',
        template: { memory: { guest: '4Gi' } },
        vmiDomain: { memory: { guest: '2Gi', maxGuest: '8Gi' }, resources: { requests: { memory: '2Gi' } } },
        current: '2Gi',
        want: [
          { op: 'test', path: '/spec/domain/memory/guest', value: '2Gi' }, { op: 'replace', path: '/spec/domain/memory/guest', value: '4Gi' },
          { op: 'test', path: '/spec/domain/resources/requests/memory', value: '2Gi' }, { op: 'replace', path: '/spec/domain/resources/requests/memory', value: '4Gi' },
        ],
      },
      {
        name: 'the request raised to the guest after an incomplete unplug; the limit then adds 0',
        template: { memory: { guest: '4Gi' }, resources: { limits: { memory: '3Gi' } } },
        vmiDomain: { memory: { guest: '2Gi', maxGuest: '8Gi' }, resources: { requests: { memory: '1Gi' }, limits: { memory: '3Gi' } } },
        current: '3Gi',
        want: [
          { op: 'test', path: '/spec/domain/memory/guest', value: '2Gi' }, { op: 'replace', path: '/spec/domain/memory/guest', value: '4Gi' },
          { op: 'test', path: '/spec/domain/resources/requests/memory', value: '1Gi' }, { op: 'replace', path: '/spec/domain/resources/requests/memory', value: '4Gi' },
          { op: 'test', path: '/spec/domain/resources/limits/memory', value: '3Gi' }, { op: 'replace', path: '/spec/domain/resources/limits/memory', value: '3Gi' },
        ],
      },
      {
        name: 'no request on the VMI: the limit the template sets grows by the delta',
        template: { memory: { guest: '3Gi' }, resources: { limits: { memory: '4Gi' } } },
        vmiDomain: { memory: { guest: '2Gi', maxGuest: '8Gi' }, resources: { limits: { memory: '4Gi' } } },
        current: '2Gi',
        want: [
          { op: 'test', path: '/spec/domain/memory/guest', value: '2Gi' }, { op: 'replace', path: '/spec/domain/memory/guest', value: '3Gi' },
          { op: 'test', path: '/spec/domain/resources/limits/memory', value: '4Gi' }, { op: 'replace', path: '/spec/domain/resources/limits/memory', value: '5Gi' },
        ],
      },
    ];
    for (const c of cases) {
      // arrange
      const v = vmi({ domain: c.vmiDomain, status: { conditions: [cond('LiveMigratable')], memory: { guestAtBoot: '2Gi', guestCurrent: c.current } } });
      // act
      const got = memoryChange({ template: spec(c.template), vmi: v, now: NOW, defaultArchitecture: 'amd64' });
      // assert
      assert.deepEqual(got.kind === 'patch' ? got.ops : got, c.want, c.name);
    }
  });
});

describe('affinity, nodeSelector, tolerations', () => {
  const aff = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } };
  const tol = [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }];
  test('table: add when the VMI has none, test+replace, test+remove when the template has none; separate patches; refused while migrating', () => {
    const cases: { name: string; template: Record<string, unknown>; vmiSpec: Record<string, unknown>; status?: Record<string, unknown>; want: unknown }[] = [
      { name: 'nothing changed', template: { nodeSelector: { a: 'b' } }, vmiSpec: { nodeSelector: { a: 'b' } }, want: [] },
      { name: 'an empty map is none', template: { nodeSelector: {} }, vmiSpec: {}, want: [] },
      { name: 'nodeSelector added', template: { nodeSelector: { a: 'b' } }, vmiSpec: {}, want: [[{ op: 'add', path: '/spec/nodeSelector', value: { a: 'b' } }]] },
      {
        name: 'nodeSelector replaced and affinity removed: two patches',
        template: { nodeSelector: { a: 'c' } },
        vmiSpec: { nodeSelector: { a: 'b' }, affinity: aff },
        want: [
          [{ op: 'test', path: '/spec/nodeSelector', value: { a: 'b' } }, { op: 'replace', path: '/spec/nodeSelector', value: { a: 'c' } }],
          [{ op: 'test', path: '/spec/affinity', value: aff }, { op: 'remove', path: '/spec/affinity' }],
        ],
      },
      { name: 'while migrating', template: { affinity: aff }, vmiSpec: {}, status: migrating, want: ['error: Node affinity should not be changed during VMI migration'] },
    ];
    for (const c of cases) {
      // act
      const got = affinityChanges({ template: spec({}, c.template), vmi: vmi({ spec: c.vmiSpec, status: c.status }), now: NOW });
      // assert
      assert.deepEqual(got.map((x) => (x.kind === 'patch' ? x.ops : kindOf(x))), c.want, c.name);
    }
  });

  test('table: tolerations', () => {
    const cases: { name: string; template: Record<string, unknown>; vmiSpec: Record<string, unknown>; status?: Record<string, unknown>; want: unknown }[] = [
      { name: 'same', template: { tolerations: tol }, vmiSpec: { tolerations: tol }, want: 'none' },
      { name: 'added', template: { tolerations: tol }, vmiSpec: {}, want: [{ op: 'add', path: '/spec/tolerations', value: tol }] },
      { name: 'removed', template: {}, vmiSpec: { tolerations: tol }, want: [{ op: 'test', path: '/spec/tolerations', value: tol }, { op: 'remove', path: '/spec/tolerations' }] },
      { name: 'while migrating', template: { tolerations: tol }, vmiSpec: {}, status: migrating, want: 'error: tolerations should not be changed during VMI migration' },
    ];
    for (const c of cases) {
      // act
      const got = tolerationsChange({ template: spec({}, c.template), vmi: vmi({ spec: c.vmiSpec, status: c.status }), now: NOW });
      // assert
      assert.deepEqual(got.kind === 'patch' ? got.ops : kindOf(got), c.want, c.name);
    }
  });
});

describe('syncRestartRequired', () => {
  const base = (): Record<string, unknown> => ({ cpu: { sockets: 1, cores: 1, threads: 1 }, memory: { guest: '2Gi' }, firmware: { uuid: 'u-1' }, devices: { disks: [{ name: 'root', disk: {} }] } });
  const vols = [{ name: 'root', containerDisk: { image: 'x' } }];
  const hpVol = { name: 'data', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } };
  const cd = { name: 'cd', cdrom: {} };
  const cdVol = { name: 'cd', persistentVolumeClaim: { claimName: 'iso', hotpluggable: true } };
  const withDisks = (disks: object[]) => ({ ...base(), devices: { disks } });
  test('table: what a LiveUpdate VM may change without a restart, and what it may not', () => {
    const cases: { name: string; current: VirtualMachineInstanceSpec; started?: VirtualMachineInstanceSpec; liveUpdate?: boolean; vmiIfaces?: object[]; vmiNets?: object[]; want: boolean }[] = [
      { name: 'unchanged', current: spec(base(), { volumes: vols }), want: false },
      { name: 'sockets', current: spec({ ...base(), cpu: { sockets: 3, cores: 1, threads: 1 } }, { volumes: vols }), want: false },
      { name: 'sockets under Stage', current: spec({ ...base(), cpu: { sockets: 3, cores: 1, threads: 1 } }, { volumes: vols }), liveUpdate: false, want: true },
      { name: 'cores', current: spec({ ...base(), cpu: { sockets: 1, cores: 2, threads: 1 } }, { volumes: vols }), want: true },
      { name: 'dedicated CPU placement', current: spec({ ...base(), cpu: { sockets: 1, cores: 1, threads: 1, dedicatedCpuPlacement: true } }, { volumes: vols }), want: true },
      { name: 'guest memory', current: spec({ ...base(), memory: { guest: '4Gi' } }, { volumes: vols }), want: false },
      { name: 'nodeSelector, affinity, tolerations', current: spec(base(), { volumes: vols, nodeSelector: { a: 'b' }, tolerations: [{ key: 'k', operator: 'Exists' }], affinity: { podAffinity: {} } }), want: false },
      { name: 'a hotpluggable volume and its disk added', current: spec(withDisks([{ name: 'root', disk: {} }, { name: 'data', disk: { bus: 'scsi' } }]), { volumes: [...vols, hpVol] }), want: false },
      { name: 'a non-hotpluggable volume added', current: spec(base(), { volumes: [...vols, { name: 'e', emptyDisk: { capacity: '1Gi' } }] }), want: true },
      { name: 'a CD-ROM ejected (disk removed)', started: spec(withDisks([{ name: 'root', disk: {} }, cd]), { volumes: [...vols, cdVol] }), current: spec(base(), { volumes: vols }), want: true },
      { name: 'a CD-ROM volume swapped, the disk kept', started: spec(withDisks([{ name: 'root', disk: {} }, cd]), { volumes: [...vols, cdVol] }), current: spec(withDisks([{ name: 'root', disk: {} }, cd]), { volumes: vols }), want: false },
      { name: 'a bridge interface added (hot-plugged)', current: spec({ ...base(), devices: { disks: [{ name: 'root', disk: {} }], interfaces: [{ name: 'x', bridge: {} }] } }, { volumes: vols, networks: [{ name: 'x', multus: { networkName: 'nad' } }] }), want: false },
      {
        name: 'an interface the VMI has removed from the template (not set absent)',
        started: spec({ ...base(), devices: { disks: [{ name: 'root', disk: {} }], interfaces: [{ name: 'x', bridge: {} }] } }, { volumes: vols, networks: [{ name: 'x', multus: { networkName: 'nad' } }] }),
        current: spec(base(), { volumes: vols }),
        vmiIfaces: [{ name: 'x', bridge: {} }],
        vmiNets: [{ name: 'x', multus: { networkName: 'nad' } }],
        want: true,
      },
    ];
    for (const c of cases) {
      // arrange
      const started = c.started ?? spec(base(), { volumes: vols });
      const running = vmi({ domain: { firmware: { uuid: 'u-1' }, devices: { interfaces: c.vmiIfaces } }, spec: { networks: c.vmiNets } });
      // act
      const got = restartRequired({ started, current: c.current, vmi: running, liveUpdate: c.liveUpdate ?? true, volumesMigrate: false });
      // assert
      assert.equal(got, c.want, c.name);
    }
  });

  test('table: the start revision generation comes from the name suffix', () => {
    const cases: [string | undefined, number | undefined][] = [['revision-start-vm-0a1b-c2-7', 7], ['revision-start-vm-uid-12', 12], [undefined, undefined], ['', undefined]];
    for (const [name, want] of cases) assert.equal(revisionGeneration(name), want, String(name));
  });
});
