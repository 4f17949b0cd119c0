import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { clusterConfigFromKubeVirt, memoryOverhead, renderLauncherPod } from '../../shared/template/index.ts';
import { compute } from './support.ts';

const Mi = 1048576n;
const config = clusterConfigFromKubeVirt();

/** A VMI as unit tests see it (no webhook defaults): only what the case sets. */
function vmi(spec: Partial<VirtualMachineInstance['spec']['domain']>, extra: Partial<VirtualMachineInstance['spec']> = {}): VirtualMachineInstance {
  return {
    metadata: { name: 'n', namespace: 'ns', uid: 'u' },
    spec: { ...extra, domain: { devices: {}, ...spec } },
  };
}

describe('the reference numbers hold exactly', () => {
  test('1G request, 1 vCPU → overhead 303943013 B and pod memory request 1303943013', () => {
    // arrange
    const v = vmi({ resources: { requests: { memory: '1G' } } });
    // act
    const pod = renderLauncherPod(v, config);
    // assert
    assert.equal(memoryOverhead(v, config).bytes, 303943013n);
    assert.equal(compute(pod).resources?.requests?.['memory'], '1303943013');
    assert.equal(pod.metadata?.annotations?.['kubevirt.io/memory-overhead-bytes'], '303943013');
  });

  test('the same VMI after webhook-style topology (1 socket) gives the same numbers', () => {
    const v = vmi({ cpu: { sockets: 1, cores: 1, threads: 1 }, resources: { requests: { memory: '1G' } } });
    assert.equal(compute(renderLauncherPod(v, config)).resources?.requests?.['memory'], '1303943013');
  });

  test('1Gi request → 290Mi overhead, request prints canonically as 1314Mi', () => {
    const v = vmi({ resources: { requests: { memory: '1Gi' } } });
    assert.equal(memoryOverhead(v, config).bytes, 290n * Mi);
    assert.equal(compute(renderLauncherPod(v, config)).resources?.requests?.['memory'], '1314Mi');
  });

  const cpuCases: Array<[string, Partial<VirtualMachineInstance['spec']['domain']>, string]> = [
    ['3 cores', { cpu: { cores: 3 } }, '300m'],
    ['3 sockets', { cpu: { sockets: 3 } }, '300m'],
    ['5 vCPUs (5×1×1)', { cpu: { sockets: 5, cores: 1, threads: 1 } }, '500m'],
    ['no cpu spec → 1 vCPU', {}, '100m'],
    ['12 vCPUs → 1.2 cores', { cpu: { cores: 12 } }, '1200m'],
    ['10 vCPUs → 1 core', { cpu: { cores: 10 } }, '1'],
  ];
  for (const [name, domain, want] of cpuCases) {
    test(`cpu request with the default allocation ratio: ${name} → ${want}`, () => {
      const pod = renderLauncherPod(vmi({ ...domain, resources: { requests: { memory: '64M' } } }), config);
      assert.equal(compute(pod).resources?.requests?.['cpu'], want);
    });
  }

  test('cpuAllocationRatio 4 → 3 vCPUs request 750m', () => {
    const cfg = clusterConfigFromKubeVirt({ spec: { configuration: { developerConfiguration: { cpuAllocationRatio: 4 } } } });
    assert.equal(compute(renderLauncherPod(vmi({ cpu: { cores: 3 } }), cfg)).resources?.requests?.['cpu'], '750m');
  });
});

describe('memory overhead terms (reference §b.7)', () => {
  const base = 288n * Mi; // 240 fixed + 8 vCPU + 8 IOThread + 32 video
  const cases: Array<[string, VirtualMachineInstance, bigint]> = [
    ['page tables for 64M', vmi({ resources: { requests: { memory: '64M' } } }), base + 125000n],
    ['page tables for 8192Ki', vmi({ resources: { requests: { memory: '8192Ki' } } }), base + 16384n],
    ['no graphics', vmi({ devices: { autoattachGraphicsDevice: false } }), base - 32n * Mi],
    ['4 vCPUs from topology', vmi({ cpu: { cores: 2, sockets: 2 } }), base + 24n * Mi],
    ['vCPUs from cpu limit 2500m → 3', vmi({ resources: { limits: { cpu: '2500m' } } }), base + 16n * Mi],
    ['vCPUs from cpu request 2', vmi({ resources: { requests: { cpu: '2' } } }), base + 8n * Mi],
    ['arm64', vmi({}, { architecture: 'arm64' }), base + 128n * Mi],
    ['GPU (VFIO)', vmi({ devices: { gpus: [{ name: 'g', deviceName: 'nvidia.com/X' }] } }), base + 1024n * Mi],
    ['SR-IOV (VFIO)', vmi({ devices: { interfaces: [{ name: 's', sriov: {} }] } }), base + 1024n * Mi],
    ['downward metrics volume', vmi({}, { volumes: [{ name: 'm', downwardMetrics: {} }] }), base + 1n * Mi],
    ['one exec probe', vmi({}, { livenessProbe: { exec: { command: ['true'] } } }), base + 110n * Mi],
    ['two exec probes', vmi({}, { livenessProbe: { exec: { command: ['a'] } }, readinessProbe: { exec: { command: ['b'] } } }), base + 120n * Mi],
    ['guest agent probe is free', vmi({}, { readinessProbe: { guestAgentPing: {} } }), base],
    ['SEV', vmi({ launchSecurity: { sev: {} } }), base + 256n * Mi],
    ['TPM', vmi({ devices: { tpm: {} } }), base + 53n * Mi],
    ['TPM disabled', vmi({ devices: { tpm: { enabled: false } } }), base],
    ['dedicated CPUs', vmi({ cpu: { dedicatedCpuPlacement: true } }), base + 100n * Mi],
    ['guaranteed QoS', vmi({ resources: { requests: { cpu: '1' }, limits: { cpu: '1', memory: '1M' } } }), base + 100n * Mi],
    ['reserved overhead', vmi({ memory: { reservedOverhead: { addedOverhead: '10Mi' } } }), base + 10n * Mi],
    ['passt binding', vmi({ devices: { interfaces: [{ name: 'p', passtBinding: {} }] } }), base + 250n * Mi],
  ];
  for (const [name, v, want] of cases) {
    test(name, () => assert.equal(memoryOverhead(v, config).bytes, want, `${name}: ${memoryOverhead(v, config).terms.map((t) => `${t.name}=${t.bytes}`).join(' ')}`));
  }

  test('additionalGuestMemoryOverheadRatio multiplies in kB granularity, last', () => {
    // arrange: 288Mi = 301989888 B → 301990 kB; × 0.5 = 150995 kB extra
    const cfg = clusterConfigFromKubeVirt({ spec: { configuration: { additionalGuestMemoryOverheadRatio: '1.5' } } });
    // act + assert
    assert.equal(memoryOverhead(vmi({}), cfg).bytes, base + 150995000n);
  });
});

describe('resources', () => {
  test('memory overcommit 150% scales the guest request before the overhead', () => {
    const cfg = clusterConfigFromKubeVirt({ spec: { configuration: { developerConfiguration: { memoryOvercommit: 150 } } } });
    const pod = renderLauncherPod(vmi({ memory: { guest: '3Gi' } }), cfg);
    // 3Gi × 100 / 150 = 2Gi; no request in spec → page tables 0 → overhead 288Mi
    assert.equal(compute(pod).resources?.requests?.['memory'], `${2048 + 288}Mi`);
  });

  test('a memory limit gets the overhead too, and user values win', () => {
    const pod = renderLauncherPod(vmi({ resources: { requests: { memory: '1Gi', cpu: '2' }, limits: { memory: '2Gi' } } }), config);
    assert.equal(compute(pod).resources?.requests?.['cpu'], '2');
    // cpu request 2 with no topology counts 2 vCPUs: 290Mi + 8Mi overhead
    assert.equal(compute(pod).resources?.limits?.['memory'], `${2048 + 298}Mi`);
  });

  test('overcommitGuestOverhead keeps the request at the guest size', () => {
    const pod = renderLauncherPod(vmi({ resources: { requests: { memory: '1Gi' }, overcommitGuestOverhead: true } }), config);
    assert.equal(compute(pod).resources?.requests?.['memory'], '1Gi');
  });

  test('automatic memory limit with a namespace quota: request × label ratio', () => {
    const pod = renderLauncherPod(vmi({ resources: { requests: { memory: '1Gi' } } }), config, {
      namespace: { quotaLimitsMemory: true, labels: { 'alpha.kubevirt.io/auto-memory-limits-ratio': '1.5' } },
    });
    assert.equal(compute(pod).resources?.limits?.['memory'], '1971Mi');
  });

  test('GPUs and host devices are requested once each as device plugin resources', () => {
    const pod = renderLauncherPod(vmi({ devices: { gpus: [{ name: 'a', deviceName: 'nvidia.com/X' }, { name: 'b', deviceName: 'nvidia.com/X' }], hostDevices: [{ name: 'h', deviceName: 'kubevirt.io/usb' }] } }), config);
    assert.equal(compute(pod).resources?.limits?.['nvidia.com/X'], '2');
    assert.equal(compute(pod).resources?.requests?.['kubevirt.io/usb'], '1');
  });
});
