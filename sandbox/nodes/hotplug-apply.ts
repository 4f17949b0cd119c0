/**
 * What the target virt-handler does with a CPU or memory hotplug once the migration that carries
 * it has moved the domain (reference-vm-vmi-depth §5 "Who finishes the update"): it gives the
 * new domain the VMI spec's vCPUs / guest memory, removes `HotVCPUChange` / `HotMemoryChange` (and
 * `MigrationRequired`, the new pod having every network of the spec), and
 * reports `status.currentCPUTopology` / `status.memory.guestRequested` (and `guestCurrent`, the
 * guest having taken the memory at once here). The migration controller holds the migration's
 * `Succeeded` until the conditions are gone. Pure; merged into the completing step's status patch.
 */
import type { Condition, Vmi } from './objects.ts';

const CPU_CHANGE = 'HotVCPUChange';
const MEMORY_CHANGE = 'HotMemoryChange';
const MIGRATION_REQUIRED = 'MigrationRequired';

/** The status fields of an applied hotplug, or undefined when the VMI asks for none. */
export function appliedHotplugStatus(vmi: Vmi, nowIso: string, failMemory = false): Record<string, unknown> | undefined {
  const conditions = vmi.status?.conditions ?? [];
  const cpuChange = conditions.some((c) => c.type === CPU_CHANGE);
  const memoryChange = conditions.some((c) => c.type === MEMORY_CHANGE && c.status === 'True');
  // The new pod has every network the spec asks for: the target handler drops MigrationRequired.
  const migrationRequired = conditions.some((c) => c.type === MIGRATION_REQUIRED);
  if (!cpuChange && !memoryChange && !migrationRequired) return undefined;
  const out: Record<string, unknown> = {};
  let next: Condition[] = conditions.filter((c) => c.type !== CPU_CHANGE && c.type !== MIGRATION_REQUIRED && (c.type !== MEMORY_CHANGE || !memoryChange));
  if (cpuChange) {
    const cpu = vmi.spec?.domain?.cpu;
    out['currentCPUTopology'] = { sockets: cpu?.sockets ?? 1, cores: cpu?.cores ?? 1, threads: cpu?.threads ?? 1 };
  }
  if (memoryChange) {
    const guest = vmi.spec?.domain?.memory?.guest;
    if (failMemory) {
      // A hotplug the guest refused: False, which makes the VM controller ask for a restart.
      next = [...next, { type: MEMORY_CHANGE, status: 'False', reason: 'MemoryHotplugFailed', message: 'memory hotplug failed (sandbox test hook)', lastProbeTime: null, lastTransitionTime: nowIso }];
    } else if (guest !== undefined) {
      out['memory'] = { ...((vmi.status?.memory ?? {}) as Record<string, unknown>), guestRequested: guest, guestCurrent: guest };
    }
  }
  out['conditions'] = next;
  return out;
}
