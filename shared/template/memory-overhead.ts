/**
 * KubeVirt's memory overhead estimate for a launcher pod (`CalculateMemoryOverhead`: the KVM
 * backend's estimate, then the network bindings'). Exact integer byte arithmetic; every term is
 * reported separately so tests (and people) can see where the bytes come from.
 */
import type { VirtualMachineInstance } from '../api/index.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { parseQuantity, quantityValue } from '../api/quantity.ts';
import {
  hasTpm, hasVfio, isCpuDedicated, isSev, topologyVcpus, vmiResources, wantsGuaranteedQos,
} from './vmi-traits.ts';

const Mi = 1024n * 1024n;

/** One named addend of the overhead, in bytes. */
export interface OverheadTerm {
  name: string;
  bytes: bigint;
}

/** The overhead and how it was reached. `bytes` = sum of `terms`. */
export interface MemoryOverhead {
  bytes: bigint;
  terms: OverheadTerm[];
}

/** vCPUs as the overhead formula counts them: topology, else cpu limit, else cpu request, min 1. */
function overheadVcpus(vmi: VirtualMachineInstance): bigint {
  const cpu = vmi.spec.domain.cpu;
  let n = 0n;
  if (cpu) {
    n = BigInt(topologyVcpus(cpu));
  } else {
    const res = vmiResources(vmi);
    const q = res.limits['cpu'] ?? res.requests['cpu'];
    if (q) n = quantityValue(q);
  }
  return n < 1n ? 1n : n;
}

/**
 * The memory overhead of a VMI's launcher pod, term by term (reference §b.7). `bytes` is what
 * the pod's memory request grows by and what the `kubevirt.io/memory-overhead-bytes`
 * annotation says.
 */
export function memoryOverhead(vmi: VirtualMachineInstance, config: ClusterConfig): MemoryOverhead {
  const terms: OverheadTerm[] = [];
  const add = (name: string, bytes: bigint) => terms.push({ name, bytes });
  const res = vmiResources(vmi);
  const devices = vmi.spec.domain.devices;

  // 1. page tables: one byte per 512 bytes of the *requested* memory, counted in whole kB.
  const req = res.requests['memory'];
  const reqBytes = req ? quantityValue(req) : 0n;
  const kb = reqBytes <= 0n ? 0n : (reqBytes + 999n) / 1000n;
  add('pageTables', (kb * 1000n) / 512n);
  // 2. fixed: virt-launcher-monitor 25Mi, virt-launcher 100Mi, virtlogd 25Mi, virtqemud 40Mi, qemu 50Mi.
  add('virtLauncherMonitor', 25n * Mi);
  add('virtLauncher', 100n * Mi);
  add('virtlogd', 25n * Mi);
  add('virtqemud', 40n * Mi);
  add('qemu', 50n * Mi);
  // 3./4. vCPU tables and the IOThread.
  add('vcpuTables', 8n * Mi * overheadVcpus(vmi));
  add('ioThread', 8n * Mi);
  // 5. video RAM unless graphics are off.
  if (devices.autoattachGraphicsDevice !== false) add('videoRam', 32n * Mi);
  // 6. arm64 UEFI pflash.
  if ((vmi.spec.architecture || config.defaultArchitecture) === 'arm64') add('arm64Pflash', 128n * Mi);
  // 7. VFIO locks guest RAM plus ~1G of MMIO space.
  if (hasVfio(vmi)) add('vfio', 1024n * Mi);
  // 8. downwardMetrics emptyDir (memory-backed).
  if ((vmi.spec.volumes ?? []).some((v) => v.downwardMetrics !== undefined) ) {
    add('downwardMetrics', 1n * Mi);
  }
  // 9. exec probes: 10Mi each, plus 100Mi once for the virt-probe binary.
  const liveness = vmi.spec.livenessProbe?.exec !== undefined;
  const readiness = vmi.spec.readinessProbe?.exec !== undefined;
  if (liveness) add('livenessProbe', 10n * Mi);
  if (readiness) add('readinessProbe', 10n * Mi);
  if (liveness || readiness) add('virtProbe', 100n * Mi);
  // 10.–12.
  if (isSev(vmi)) add('sev', 256n * Mi);
  if (hasTpm(vmi)) add('swtpm', 53n * Mi);
  if (isCpuDedicated(vmi) || wantsGuaranteedQos(res)) add('dedicatedOrGuaranteed', 100n * Mi);
  // 13. explicit reservation.
  const reserved = vmi.spec.domain.memory?.reservedOverhead?.addedOverhead;
  if (reserved !== undefined) {
    add('reservedOverhead', quantityValue(parseQuantity(reserved, 'spec.domain.memory.reservedOverhead.addedOverhead')));
  }
  // 14. the cluster's ratio multiplies everything so far, in kB granularity (MultiplyMemory):
  // float64 arithmetic truncated to an integer number of kB, as Go's int64() conversion does.
  const ratio = config.additionalGuestMemoryOverheadRatio;
  if (ratio !== undefined) {
    const sum = terms.reduce((s, t) => s + t.bytes, 0n);
    const sumKb = (sum + 999n) / 1000n;
    const extraKb = BigInt(Math.trunc(Number(sumKb) * (ratio - 1)));
    add('additionalOverheadRatio', extraKb * 1000n);
  }
  // Network bindings (pkg/network/resources/memory.go), after the ratio: the core passt binding
  // needs 250Mi; each binding plugin an interface uses, once, what the cluster configures as its
  // compute overhead (a plugin named "passt" is a plugin like any other).
  const ifaces = devices.interfaces ?? [];
  if (ifaces.some((i) => i.passtBinding !== undefined)) add('passtBinding', 250n * Mi);
  const plugins = new Set(ifaces.flatMap((i) => (i.binding ? [i.binding.name] : [])));
  for (const name of plugins) {
    const bytes = config.networkBindings[name]?.memoryOverheadBytes;
    if (bytes !== undefined) add(`bindingPlugin:${name}`, bytes);
  }
  return { bytes: terms.reduce((s, t) => s + t.bytes, 0n), terms };
}
