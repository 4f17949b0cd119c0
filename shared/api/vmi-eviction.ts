/**
 * The VMI predicates the node-drain controllers and virt-api's eviction admission share
 * (reference node-drain-updates §0): the resolved eviction strategy, "migrates on eviction",
 * migratable, marked for eviction, final, migrating, and KubeVirt's `IsRunning` for migrations.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from './index.ts';

export const EVACUATION_MIGRATION_ANNOTATION = 'kubevirt.io/evacuationMigration';
export const WORKLOAD_UPDATE_MIGRATION_ANNOTATION = 'kubevirt.io/workloadUpdateMigration';
export const WORKLOAD_UPDATE_ABORTION_ANNOTATION = 'kubevirt.io/testWorkloadUpdateMigrationAbortion';
export const VOLUME_UPDATE_MIGRATION_LABEL = 'kubevirt.io/volume-update-migration';
export const EVICTION_SOURCE_ANNOTATION = 'kubevirt.io/eviction-source';

export type EvictionStrategy = 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';

/** `VMIEvictionStrategy`: the VMI's own strategy, else the cluster's (for VMIs that bypassed the webhook). */
export function evictionStrategyOf(vmi: VirtualMachineInstance, clusterStrategy: string | undefined): string | undefined {
  return vmi.spec?.evictionStrategy ?? clusterStrategy;
}

/** A condition `LiveMigratable` with status `True`. */
export function isMigratable(vmi: VirtualMachineInstance): boolean {
  return (vmi.status?.conditions ?? []).some((c) => c.type === 'LiveMigratable' && c.status === 'True');
}

/** `VMIMigratableOnEviction`: LiveMigrate always, LiveMigrateIfPossible when migratable, nothing else. */
export function migratesOnEviction(vmi: VirtualMachineInstance, clusterStrategy: string | undefined): boolean {
  switch (evictionStrategyOf(vmi, clusterStrategy)) {
    case 'LiveMigrate':
      return true;
    case 'LiveMigrateIfPossible':
      return isMigratable(vmi);
    default:
      return false;
  }
}

export function isMarkedForEviction(vmi: VirtualMachineInstance): boolean {
  return !!vmi.status?.evacuationNodeName;
}

export function isFinalVmi(vmi: VirtualMachineInstance): boolean {
  return vmi.status?.phase === 'Failed' || vmi.status?.phase === 'Succeeded';
}

/** `migrations.IsMigrating`: a migration state that has started (at or before now) and not ended. */
export function isMigrating(vmi: VirtualMachineInstance, nowMs: number): boolean {
  const ms = vmi.status?.migrationState;
  if (!ms?.startTimestamp) return false;
  const start = Date.parse(ms.startTimestamp);
  if (!(start <= nowMs)) return false;
  return !ms.endTimestamp || Date.parse(ms.endTimestamp) > nowMs;
}

export function isFinalMigration(m: VirtualMachineInstanceMigration): boolean {
  return m.status?.phase === 'Failed' || m.status?.phase === 'Succeeded';
}

const NOT_RUNNING = new Set(['', 'Pending', 'WaitingForSync', 'Synchronizing', 'Failed', 'Succeeded']);

/**
 * KubeVirt's `IsRunning` as the workload updater counts it: false before the target is being
 * scheduled and once final; false for `Scheduling` of a decentralized source (only `sendTo`);
 * true for every other phase, unknown ones included.
 */
export function isRunningMigration(m: VirtualMachineInstanceMigration): boolean {
  const phase = m.status?.phase ?? '';
  if (NOT_RUNNING.has(phase)) return false;
  const spec = (m.spec ?? {}) as { sendTo?: unknown; receive?: unknown };
  if (phase === 'Scheduling' && spec.sendTo !== undefined && spec.receive === undefined) return false;
  return true;
}

/** `ns/vmiName` of a migration: what the `byVMIName` index keys it by. */
export function migrationVmiKey(m: VirtualMachineInstanceMigration): string {
  return `${m.metadata?.namespace ?? ''}/${m.spec?.vmiName ?? ''}`;
}
