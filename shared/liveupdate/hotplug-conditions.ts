/**
 * The hotplug conditions on a VMI (reference-vm-vmi-depth §5 "Who finishes the update"), asked by
 * several controllers: the VMI controller adds them, the workload updater migrates the VMIs that
 * carry them, the migration controller holds a migration's `Succeeded` back while they are there,
 * and the VM controller refuses a second hotplug while one is in progress. Pure.
 */
import type { CPU, CPUTopology, VirtualMachineInstance } from '../api/index.ts';
import { VMI_CONDITION } from '../api/well-known.ts';
import { parseQuantity } from '../api/quantity.ts';

const cond = (vmi: VirtualMachineInstance | undefined, type: string) => vmi?.status?.conditions?.find((c) => c.type === type);

/** KubeVirt's `GetNumberOfVCPUs`: sockets × cores × threads, an unset (or 0) factor counting 1. */
export function vcpuCount(cpu: CPU | CPUTopology | undefined): number {
  const f = (n: number | undefined) => (n === undefined || n === 0 ? 1 : n);
  return f(cpu?.sockets) * f(cpu?.cores) * f(cpu?.threads);
}

/** `HotVCPUChange` exists, with any status. */
export function hasCpuChangeCondition(vmi: VirtualMachineInstance | undefined): boolean {
  return cond(vmi, VMI_CONDITION.VCPUChange) !== undefined;
}

/** The `HotMemoryChange` condition's status, if any (`False` = a memory hotplug failed). */
export function memoryChangeStatus(vmi: VirtualMachineInstance | undefined): string | undefined {
  return cond(vmi, VMI_CONDITION.MemoryChange)?.status;
}

/**
 * A hot-plug waiting for (or in) its migration: `HotVCPUChange` with any status, or
 * `HotMemoryChange` / `MigrationRequired` True (the workload updater's "hot-plug in progress",
 * reference-node-drain-updates §3.2; the migration controller's hold on `Succeeded`).
 */
export function isHotplugInProgress(vmi: VirtualMachineInstance | undefined): boolean {
  return hasCpuChangeCondition(vmi) || memoryChangeStatus(vmi) === 'True' || cond(vmi, VMI_CONDITION.MigrationRequired)?.status === 'True';
}

/**
 * The VMI controller's CPU rule (Running phase): `maxSockets` ≠ 0 and the spec's vCPUs differ
 * from `status.currentCPUTopology`'s — the spec was raised and the domain does not have it yet.
 */
export function cpuHotplugPending(vmi: VirtualMachineInstance): boolean {
  const cpu = vmi.spec.domain.cpu;
  if (!cpu?.maxSockets) return false;
  return vcpuCount(cpu) !== vcpuCount(vmi.status?.currentCPUTopology);
}

/** The VMI controller's memory rule: `maxGuest` set and `memory.guest` ≠ `status.memory.guestRequested`. */
export function memoryHotplugPending(vmi: VirtualMachineInstance): boolean {
  const memory = vmi.spec.domain.memory;
  if (memory?.maxGuest === undefined || memory.guest === undefined) return false;
  const requested = vmi.status?.memory?.guestRequested;
  if (requested === undefined) return true;
  return parseQuantity(memory.guest).nanos !== parseQuantity(requested).nanos;
}
