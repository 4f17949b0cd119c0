/**
 * The VM status side of a volume migration (reference-vm-vmi-depth §7, KubeVirt's
 * `syncVolumeMigration`), pure: run on the status being computed *before* the VMI's conditions
 * are mirrored, so that the VM's `VolumesChange` still shows what the previous pass saw.
 *
 * - The template back on the source claims, or the strategy no longer Migration: the migration
 *   state is dropped, with the VM's `VolumesChange` and `ManualRecoveryRequired`.
 * - The VMI gone or final while the VM showed `VolumesChange=True`: `ManualRecoveryRequired=True`,
 *   reason "VMI was removed or was final during the volume migration" (it blocks a new start: the
 *   guest may have written to either claim).
 * - The VMI's `VolumesChange=False` reason `VolumesChangeCancellation`: the state is dropped.
 */
import type { VirtualMachine, VirtualMachineCondition, VirtualMachineInstance, VirtualMachineStatus } from '../../../shared/api/index.ts';
import { claimOfVolume } from '../../../shared/storage/vm-volumes.ts';
import { VOLUMES_CHANGE_CANCELLATION_REASON, VOLUMES_CHANGE_CONDITION } from '../../../shared/storage/volume-migration.ts';
import { isFinal } from '../run-strategy.ts';
import { VM_CONDITION } from '../well-known.ts';

export const MANUAL_RECOVERY_REASON = 'VMI was removed or was final during the volume migration';

/** The template back on every migrated volume's source claim (by volume name). */
function recoveredVolumes(vm: VirtualMachine, status: VirtualMachineStatus): boolean {
  const sources = new Map<string, string>();
  for (const m of status.volumeUpdateState?.volumeMigrationState?.migratedVolumes ?? []) if (m.sourcePVCInfo?.claimName !== undefined) sources.set(m.volumeName, m.sourcePVCInfo.claimName);
  return (vm.spec.template.spec?.volumes ?? []).every((v) => !sources.has(v.name) || sources.get(v.name) === claimOfVolume(v));
}

/**
 * The VMI is gone mid-migration: the VM has a migration state, still under Migration with the
 * template off the sources, and shows `VolumesChange=True` from its VMI. The status write then sets
 * `ManualRecoveryRequired`; the start is held back in the same pass already (KubeVirt checks only
 * the condition, so a deleted — not final — VMI is started again once on the half-copied claims
 * before the condition lands).
 */
export function lostMidVolumeMigration(vm: VirtualMachine): boolean {
  const status = vm.status ?? {};
  if (!status.volumeUpdateState?.volumeMigrationState || vm.spec.updateVolumesStrategy !== 'Migration' || recoveredVolumes(vm, status)) return false;
  return (status.conditions ?? []).some((c) => c.type === VOLUMES_CHANGE_CONDITION && c.status === 'True');
}

/** Applies the rules to `status` (the VM status being computed, `volumeUpdateState` already this pass's). */
export function syncVolumeMigrationStatus(status: VirtualMachineStatus, vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, now: string): void {
  const state = status.volumeUpdateState?.volumeMigrationState;
  if (!state) return;
  if (recoveredVolumes(vm, status) || vm.spec.updateVolumesStrategy !== 'Migration') {
    dropState(status);
    const kept = (status.conditions ?? []).filter((c) => c.type !== VOLUMES_CHANGE_CONDITION && c.type !== VM_CONDITION.ManualRecoveryRequired);
    if (kept.length > 0) status.conditions = kept;
    else delete status.conditions;
    return;
  }
  if (!vmi || isFinal(vmi)) {
    const list = status.conditions ?? [];
    if (!list.some((c) => c.type === VOLUMES_CHANGE_CONDITION && c.status === 'True')) return;
    const cond: VirtualMachineCondition = { type: VM_CONDITION.ManualRecoveryRequired, status: 'True', reason: MANUAL_RECOVERY_REASON, lastProbeTime: null, lastTransitionTime: now };
    const old = list.find((c) => c.type === VM_CONDITION.ManualRecoveryRequired);
    if (old?.status === 'True' && old.reason === MANUAL_RECOVERY_REASON) return;
    status.conditions = [...list.filter((c) => c.type !== VM_CONDITION.ManualRecoveryRequired), cond];
    return;
  }
  const change = vmi.status?.conditions?.find((c) => c.type === VOLUMES_CHANGE_CONDITION);
  if (change?.status === 'False' && change.reason === VOLUMES_CHANGE_CANCELLATION_REASON) dropState(status);
}

/** KubeVirt sets `volumeMigrationState` to nil and keeps the (then empty) `volumeUpdateState`. */
function dropState(status: VirtualMachineStatus): void {
  const { volumeMigrationState: _dropped, ...rest } = status.volumeUpdateState ?? {};
  status.volumeUpdateState = rest;
}
