/**
 * The hotplug defaults KubeVirt's VMI mutating webhook applies (`pkg/defaults/defaults.go`,
 * reference-vm-vmi-depth §5 "Defaults for hotplug"): `maxSockets` and `maxGuest` under the
 * LiveUpdate rollout strategy, and the memory / CPU topology status fields. There is no webhook
 * here; the VM controller applies these to the VMI it starts. Pure: returns a copy.
 */
import type { VirtualMachineInstance } from '../api/index.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { formatQuantity, parseQuantity } from '../api/quantity.ts';
import { liveUpdateMemoryProblem } from './memory.ts';

/** KubeVirt's ceiling on sockets × cores × threads when it derives `maxSockets`. */
const MAX_VCPUS = 512;

/** `vmRolloutStrategy` nil or `LiveUpdate` → live updates; `Stage` → none. */
export function isLiveUpdate(config: Pick<ClusterConfig, 'vmRolloutStrategy'>): boolean {
  return config.vmRolloutStrategy === 'LiveUpdate';
}

/**
 * `maxSockets` for a VMI of `sockets × cores × threads`: the config's `maxCpuSockets` (raised to
 * `sockets`), else `sockets × maxHotplugRatio` capped so the vCPUs stay ≤ 512, never below `sockets`.
 */
export function defaultMaxSockets(sockets: number, cores: number, threads: number, config: Pick<ClusterConfig, 'liveUpdate'>): number {
  const { maxCpuSockets, maxHotplugRatio } = config.liveUpdate;
  if (maxCpuSockets !== undefined && maxCpuSockets > 0) return Math.max(maxCpuSockets, sockets);
  let max = sockets * maxHotplugRatio;
  if (max * cores * threads > MAX_VCPUS) max = Math.floor(MAX_VCPUS / (cores * threads));
  return Math.max(max, sockets);
}

/**
 * `vmi` with the hotplug defaults: under LiveUpdate and not on arm64, `maxSockets` on a VMI that
 * sets a CPU topology, `maxGuest` (the config's, else `guest × maxHotplugRatio`) on one that sets
 * `memory.guest`, kept only when the memory can be hot-plugged; then `status.memory` and
 * `status.currentCPUTopology` from the spec. VMIs without a topology or a guest size are left
 * without the maxima (KubeVirt's webhook derives those first; see docs/vm-controller.md).
 */
export function applyHotplugDefaults(input: VirtualMachineInstance, config: Pick<ClusterConfig, 'vmRolloutStrategy' | 'liveUpdate' | 'defaultArchitecture'>): VirtualMachineInstance {
  const vmi = structuredClone(input);
  const spec = vmi.spec;
  const cpu = spec.domain.cpu;
  const hasTopology = cpu !== undefined && (cpu.sockets !== undefined || cpu.cores !== undefined || cpu.threads !== undefined);
  const arch = spec.architecture || config.defaultArchitecture;
  if (isLiveUpdate(config) && arch !== 'arm64') {
    if (hasTopology && !cpu.maxSockets) {
      cpu.maxSockets = defaultMaxSockets(cpu.sockets || 1, cpu.cores || 1, cpu.threads || 1, config);
    }
    const memory = spec.domain.memory;
    if (memory?.guest !== undefined && memory.maxGuest === undefined) {
      const guest = parseQuantity(memory.guest, 'spec.domain.memory.guest');
      const max = config.liveUpdate.maxGuest ?? formatQuantity({ nanos: guest.nanos * BigInt(config.liveUpdate.maxHotplugRatio), format: guest.format });
      if (liveUpdateMemoryProblem(spec, max, config.defaultArchitecture) === undefined) memory.maxGuest = max;
    }
  }
  const status = (vmi.status ??= {});
  const guest = spec.domain.memory?.guest;
  if (guest !== undefined && status.memory === undefined) status.memory = { guestAtBoot: guest, guestCurrent: guest, guestRequested: guest };
  if (hasTopology) status.currentCPUTopology ??= { sockets: cpu.sockets || 1, cores: cpu.cores || 1, threads: cpu.threads || 1 };
  return vmi;
}
