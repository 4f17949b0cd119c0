/**
 * The VMI controller's part of a volume migration (reference-vm-vmi-depth §7, KubeVirt's
 * `requireVolumesUpdate` / `syncVolumesUpdate`): once the VM controller has recorded
 * `status.migratedVolumes` and pointed the VMI's volumes at the destination claims, the Running
 * VMI gets `VolumesChange=True` "migrate volumes" (no reason) — what the workload updater migrates
 * on. The target virt-handler removes it, with `migratedVolumes`, once the copy is done. Pure.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { claimOfVolume } from '../../shared/storage/vm-volumes.ts';
import { MIGRATE_VOLUMES_MESSAGE, VOLUMES_CHANGE_CONDITION } from '../../shared/storage/volume-migration.ts';
import { condition, findCondition, setCondition } from './conditions.ts';

/**
 * `requireVolumesUpdate`: migrated volumes recorded, no `VolumesChange` condition of any status
 * yet, and a claim volume of the VMI whose claim is not one of the migrated sources (the
 * destination the VM controller patched in).
 */
export function requiresVolumesUpdate(vmi: VirtualMachineInstance): boolean {
  const migrated = vmi.status?.migratedVolumes ?? [];
  if (migrated.length === 0 || findCondition(vmi.status ?? {}, VOLUMES_CHANGE_CONDITION)) return false;
  const sources = new Set(migrated.map((m) => m.sourcePVCInfo?.claimName));
  return (vmi.spec.volumes ?? []).some((v) => {
    const claim = claimOfVolume(v);
    return claim !== undefined && !sources.has(claim);
  });
}

/** Marks the VMI `VolumesChange=True` when {@link requiresVolumesUpdate}. */
export function markVolumesChange(vmi: VirtualMachineInstance, now: string): void {
  if (requiresVolumesUpdate(vmi)) setCondition((vmi.status ??= {}), condition(VOLUMES_CHANGE_CONDITION, 'True', '', MIGRATE_VOLUMES_MESSAGE, now));
}
