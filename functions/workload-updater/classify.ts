/**
 * The workload updater's classification (reference node-drain-updates §3.2 step 3): which running
 * VMIs are outdated (a launcher image other than the one this controller renders) or need a
 * migration for a hot-plug or volume update; of those, which to migrate, which to evict, and
 * which workload-update migrations to abort.
 */
import type { KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import {
  WORKLOAD_UPDATE_ABORTION_ANNOTATION,
  WORKLOAD_UPDATE_MIGRATION_ANNOTATION,
  isFinalMigration,
  isFinalVmi,
  isMigratable,
  isMigrating,
  isRunningMigration,
  migrationVmiKey,
} from '../../shared/api/vmi-eviction.ts';
import { isVolumeMigration } from './volume-migration.ts';
import { isHotplugInProgress } from '../../shared/liveupdate/hotplug-conditions.ts';

const cond = (vmi: VirtualMachineInstance, type: string) => (vmi.status?.conditions ?? []).find((c) => c.type === type);

/** Shared with the VM, VMI and migration controllers (shared/liveupdate/hotplug-conditions.ts). */
export { isHotplugInProgress };

export function isVolumeUpdateInProgress(vmi: VirtualMachineInstance): boolean {
  return cond(vmi, 'VolumesChange')?.status === 'True';
}

/** Running on another launcher than ours; an empty version is "unknown", never outdated. */
export function isOutdated(vmi: VirtualMachineInstance, launcherImage: string): boolean {
  const version = vmi.status?.launcherContainerImageVersion;
  return !isFinalVmi(vmi) && !!version && version !== launcherImage;
}

export function requiresMigration(vmi: VirtualMachineInstance, nowMs: number): boolean {
  if (isFinalVmi(vmi) || isMigrating(vmi, nowMs)) return false;
  if (vmi.metadata?.annotations?.[WORKLOAD_UPDATE_ABORTION_ANNOTATION] !== undefined) return false;
  return isHotplugInProgress(vmi) || isVolumeUpdateInProgress(vmi);
}

const isWorkloadUpdateMigration = (m: VirtualMachineInstanceMigration) => m.metadata?.annotations?.[WORKLOAD_UPDATE_MIGRATION_ANNOTATION] !== undefined;

/** Non-final workload-update migrations of this VMI (the `byVMIName` index). */
export function workloadUpdateMigrationsOf(vmi: VirtualMachineInstance, migrations: readonly VirtualMachineInstanceMigration[]): VirtualMachineInstanceMigration[] {
  const key = `${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`;
  return migrations.filter((m) => migrationVmiKey(m) === key && !isFinalMigration(m) && isWorkloadUpdateMigration(m));
}

/** Abort our migration when asked to, or when the change it was for is gone — never one about to complete. */
export function shouldAbort(vmi: VirtualMachineInstance, migrations: readonly VirtualMachineInstanceMigration[]): boolean {
  const n = workloadUpdateMigrationsOf(vmi, migrations).length;
  if (vmi.metadata?.annotations?.[WORKLOAD_UPDATE_ABORTION_ANNOTATION] !== undefined) return n > 0;
  if (isHotplugInProgress(vmi) || isVolumeUpdateInProgress(vmi)) return false;
  if (vmi.status?.migrationState?.targetNodeDomainReadyTimestamp) return false;
  return n > 0;
}

export interface UpdateMethods {
  liveMigrate: boolean;
  evict: boolean;
}

/** `spec.workloadUpdateStrategy.workloadUpdateMethods`; no default — an empty list means count only. */
export function updateMethodsOf(kv: KubeVirt): UpdateMethods {
  const methods = kv.spec?.workloadUpdateStrategy?.workloadUpdateMethods ?? [];
  return { liveMigrate: methods.includes('LiveMigrate'), evict: methods.includes('Evict') };
}

export interface Classification {
  /** Counted into status.outdatedVirtualMachineInstanceWorkloads (includes VMIs already moving). */
  allOutdated: VirtualMachineInstance[];
  /** To migrate: LiveMigrate allowed, and `LiveMigratable` or a valid volume migration (volume-migration.ts). */
  migratable: VirtualMachineInstance[];
  evict: VirtualMachineInstance[];
  abort: VirtualMachineInstance[];
  /** Running migrations, cluster-wide: the budget new ones come out of. */
  activeMigrations: number;
}

/** `getUpdateData`, pure. */
export function classify(vmis: readonly VirtualMachineInstance[], migrations: readonly VirtualMachineInstanceMigration[], methods: UpdateMethods, launcherImage: string, nowMs: number): Classification {
  const unfinished = migrations.filter((m) => !isFinalMigration(m));
  const lookup = new Set(unfinished.map(migrationVmiKey));
  const out: Classification = { allOutdated: [], migratable: [], evict: [], abort: [], activeMigrations: unfinished.filter(isRunningMigration).length };
  for (const vmi of vmis) {
    if (vmi.status?.phase !== 'Running' || isFinalVmi(vmi) || vmi.metadata?.deletionTimestamp) continue;
    const outdated = isOutdated(vmi, launcherImage);
    if (shouldAbort(vmi, unfinished) && !outdated) {
      out.abort.push(vmi);
      continue;
    }
    if (!outdated && !requiresMigration(vmi, nowMs)) continue;
    out.allOutdated.push(vmi);
    // Already moving, or a migration is on its way: counted, not acted on.
    if (isMigrating(vmi, nowMs) || lookup.has(`${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`)) continue;
    if (methods.liveMigrate && (isMigratable(vmi) || isVolumeMigration(vmi))) out.migratable.push(vmi);
    else if (methods.evict) out.evict.push(vmi);
  }
  return out;
}

/** Upgrades in flight are not ours to act on: only a Deployed KubeVirt whose ids agree. */
export function isRolloutComplete(kv: KubeVirt): boolean {
  return kv.status?.phase === 'Deployed' && kv.status.observedDeploymentID === kv.status.targetDeploymentID;
}
