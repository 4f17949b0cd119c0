/**
 * Applying an instance type to a VMI spec (KubeVirt's `apply/vmi.go`, reference-vm-vmi-depth.md
 * §1.5), pure. An instance type never merges with what the VM says: each field it sets must be
 * unset in the spec, and a field set by both is a conflict, reported by its path. Any conflict
 * means nothing of it (and none of the preference) is applied.
 */
import type {
  CPU,
  VirtualMachineInstanceSpec,
  VirtualMachineInstancetypeSpec,
  VirtualMachinePreferenceSpec,
} from '../api/index.ts';
import { formatQuantity, parseQuantity, quantityOf, quantityValue } from '../api/quantity.ts';

/** What applying produced: the spec and annotations with the instance type in, or the conflicting paths. */
export interface InstancetypeApplied {
  readonly spec: VirtualMachineInstanceSpec;
  readonly annotations: Record<string, string>;
  /** Paths such as `spec.domain.cpu.sockets`, in KubeVirt's order; empty when it applied. */
  readonly conflicts: readonly string[];
}

/**
 * Applies `it` to a copy of `spec` (and the object's `annotations`). `base` is the path the
 * spec lives at: `spec` for a VMI, `spec.template.spec` for a VM's template. The preference only
 * steers the CPU topology here.
 */
export function applyInstancetype(
  base: string,
  it: VirtualMachineInstancetypeSpec,
  preference: VirtualMachinePreferenceSpec | undefined,
  specIn: VirtualMachineInstanceSpec,
  annotationsIn: Readonly<Record<string, string>> = {},
): InstancetypeApplied {
  const spec = structuredClone(specIn);
  const annotations = { ...annotationsIn };
  const conflicts: string[] = [];
  const at = (...p: string[]) => [base, ...p].join('.');
  const domain = spec.domain;

  if (it.nodeSelector !== undefined) {
    if (spec.nodeSelector !== undefined) conflicts.push(at('nodeSelector'));
    else spec.nodeSelector = { ...it.nodeSelector };
  }
  if (it.schedulerName) {
    if (spec.schedulerName) conflicts.push(at('schedulerName'));
    else spec.schedulerName = it.schedulerName;
  }
  conflicts.push(...applyCpu(at, it, preference, spec));
  conflicts.push(...applyMemory(at, it, spec));
  if (it.ioThreads?.supplementalPoolThreadCount !== undefined) {
    if (domain.ioThreads?.supplementalPoolThreadCount !== undefined) conflicts.push(at('domain', 'ioThreads', 'supplementalPoolThreadCount'));
    else domain.ioThreads = { ...domain.ioThreads, supplementalPoolThreadCount: it.ioThreads.supplementalPoolThreadCount };
  }
  if (it.ioThreadsPolicy !== undefined) {
    if (domain.ioThreadsPolicy !== undefined) conflicts.push(at('domain', 'ioThreadsPolicy'));
    else domain.ioThreadsPolicy = it.ioThreadsPolicy;
  }
  if (it.launchSecurity !== undefined) {
    if (domain.launchSecurity !== undefined) conflicts.push(at('domain', 'launchSecurity'));
    else domain.launchSecurity = structuredClone(it.launchSecurity);
  }
  if ((it.gpus?.length ?? 0) > 0) {
    if ((domain.devices.gpus?.length ?? 0) > 0) conflicts.push(at('domain', 'devices', 'gpus'));
    else domain.devices.gpus = structuredClone(it.gpus);
  }
  if ((it.hostDevices?.length ?? 0) > 0) {
    if ((domain.devices.hostDevices?.length ?? 0) > 0) conflicts.push(at('domain', 'devices', 'hostDevices'));
    else domain.devices.hostDevices = structuredClone(it.hostDevices);
  }
  for (const [key, value] of Object.entries(it.annotations ?? {})) {
    // Annotation paths carry no base: they are the object's, not the spec's.
    if (key in annotations) {
      if (annotations[key] !== value) conflicts.push(`annotations.${key}`);
    } else annotations[key] = value;
  }
  return conflicts.length > 0 ? { spec: specIn, annotations: { ...annotationsIn }, conflicts } : { spec, annotations, conflicts };
}

type At = (...p: string[]) => string;

function applyCpu(at: At, it: VirtualMachineInstancetypeSpec, preference: VirtualMachinePreferenceSpec | undefined, spec: VirtualMachineInstanceSpec): string[] {
  const cpu: CPU = spec.domain.cpu ?? {};
  const conflicts: string[] = [];
  const resources = spec.domain.resources;
  if (resources?.requests?.['cpu'] !== undefined) conflicts.push(at('domain', 'resources', 'requests', 'cpu'));
  if (resources?.limits?.['cpu'] !== undefined) conflicts.push(at('domain', 'resources', 'limits', 'cpu'));
  if (cpu.sockets) conflicts.push(at('domain', 'cpu', 'sockets'));
  if (cpu.cores) conflicts.push(at('domain', 'cpu', 'cores'));
  if (cpu.threads) conflicts.push(at('domain', 'cpu', 'threads'));
  if (cpu.model && it.cpu.model !== undefined) conflicts.push(at('domain', 'cpu', 'model'));
  if (cpu.dedicatedCpuPlacement && it.cpu.dedicatedCPUPlacement !== undefined) conflicts.push(at('domain', 'cpu', 'dedicatedCPUPlacement'));
  if (cpu.isolateEmulatorThread && it.cpu.isolateEmulatorThread !== undefined) conflicts.push(at('domain', 'cpu', 'isolateEmulatorThread'));
  if (cpu.numa !== undefined && it.cpu.numa !== undefined) conflicts.push(at('domain', 'cpu', 'numa'));
  if (cpu.realtime !== undefined && it.cpu.realtime !== undefined) conflicts.push(at('domain', 'cpu', 'realtime'));
  if (conflicts.length > 0) return conflicts;

  if (!cpu.model && it.cpu.model !== undefined) cpu.model = it.cpu.model;
  if (it.cpu.dedicatedCPUPlacement !== undefined) cpu.dedicatedCpuPlacement = it.cpu.dedicatedCPUPlacement;
  if (it.cpu.isolateEmulatorThread !== undefined) cpu.isolateEmulatorThread = it.cpu.isolateEmulatorThread;
  if (cpu.numa === undefined && it.cpu.numa !== undefined) cpu.numa = structuredClone(it.cpu.numa);
  if (cpu.realtime === undefined && it.cpu.realtime !== undefined) cpu.realtime = structuredClone(it.cpu.realtime);
  if (it.cpu.maxSockets !== undefined) cpu.maxSockets = it.cpu.maxSockets;
  Object.assign(cpu, cpuTopology(it.cpu.guest, preference));
  spec.domain.cpu = cpu;
  return [];
}

/** Spread ratio when neither `spreadOptions.ratio` nor `preferSpreadSocketToCoreRatio` says. */
const DEFAULT_SPREAD_RATIO = 2;

/** sockets × cores × threads for `vcpus` under the preference's `preferredCPUTopology` (default sockets). */
export function cpuTopology(vcpus: number, preference: VirtualMachinePreferenceSpec | undefined): { sockets: number; cores: number; threads: number } {
  const t = { sockets: 1, cores: 1, threads: 1 };
  if (vcpus <= 1) return t;
  switch (preference?.cpu?.preferredCPUTopology ?? 'sockets') {
    case 'cores':
    case 'preferCores':
      t.cores = vcpus;
      return t;
    case 'threads':
    case 'preferThreads':
      t.threads = vcpus;
      return t;
    case 'spread':
    case 'preferSpread': {
      const ratio = preference?.cpu?.spreadOptions?.ratio ?? preference?.preferSpreadSocketToCoreRatio ?? DEFAULT_SPREAD_RATIO;
      const across = preference?.cpu?.spreadOptions?.across ?? 'SocketsCores';
      if (across === 'CoresThreads') {
        t.threads = ratio;
        t.cores = Math.trunc(vcpus / ratio);
      } else if (across === 'SocketsCoresThreads') {
        t.threads = 2;
        t.cores = ratio;
        t.sockets = Math.trunc(Math.trunc(vcpus / 2) / ratio);
      } else {
        t.cores = ratio;
        t.sockets = Math.trunc(vcpus / ratio);
      }
      return t;
    }
    default:
      // sockets, preferSockets, any, preferAny
      t.sockets = vcpus;
      return t;
  }
}

function applyMemory(at: At, it: VirtualMachineInstancetypeSpec, spec: VirtualMachineInstanceSpec): string[] {
  const domain = spec.domain;
  const memory = domain.memory;
  if (memory?.guest !== undefined) return [at('domain', 'memory', 'guest')];
  if (memory?.hugepages !== undefined && it.memory.hugepages !== undefined) return [at('domain', 'memory', 'hugepages')];
  if (memory?.maxGuest !== undefined && it.memory.maxGuest !== undefined) return [at('domain', 'memory', 'maxGuest')];
  if (domain.resources?.requests?.['memory'] !== undefined) return [at('domain', 'resources', 'requests', 'memory')];
  if (domain.resources?.limits?.['memory'] !== undefined) return [at('domain', 'resources', 'limits', 'memory')];

  domain.memory = { ...memory, guest: it.memory.guest };
  if (it.memory.hugepages !== undefined) domain.memory.hugepages = structuredClone(it.memory.hugepages);
  if (it.memory.maxGuest !== undefined) domain.memory.maxGuest = it.memory.maxGuest;
  const pct = it.memory.overcommitPercent ?? 0;
  if (pct > 0) {
    const guest = parseQuantity(it.memory.guest, 'spec.memory.guest');
    // KubeVirt computes this in float32: int64(float32(guest) × (1 − float32(pct)/100)).
    const factor = Math.fround(1 - Math.fround(Math.fround(pct) / 100));
    const requested = BigInt(Math.trunc(Math.fround(Math.fround(Number(quantityValue(guest))) * factor)));
    domain.resources = { ...domain.resources, requests: { ...domain.resources?.requests, memory: formatQuantity(quantityOf(requested, guest.format)) } };
  }
  return [];
}

/** The message a VMI start fails with when the instance type conflicts (KubeVirt's wording). */
export function vmiConflictMessage(conflicts: readonly string[]): string {
  return `VMI conflicts with instancetype spec in fields: [${conflicts.join(', ')}]`;
}

/** The message storing a revision fails with when the VM template conflicts. */
export function vmConflictMessage(conflicts: readonly string[]): string {
  return `VM field(s) ${conflicts.join(', ')} conflicts with selected instance type`;
}
