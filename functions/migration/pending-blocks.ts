/**
 * What holds a migration in `Pending` before its target pod (KubeVirt `migration.go`
 * `handleVMBackup`, `handleUtilityVolumes`, and the `exceeded quota` branch of
 * `processMigrationPhase`), pure:
 * - a backup in progress on the VMI (`changedBlockTracking.backupStatus` named, not completed): no
 *   target pod (KubeVirt creates it and holds the phase; we hold both), `migrationBlockedByBackup` (reason
 *   `BackupInProgress`, "Waiting for backup <b> to complete"), looked at
 *   again after the priority's delay; a `system-critical` migration first asks virt-handler to
 *   abort the backup ("Aborting backup <b> for system-critical migration");
 * - utility volumes on the VMI (a backup's target while attached): no target pod, a Warning
 *   `UtilityVolumeMigrationPending` each pass, `migrationBlockedByUtilityVolumes` (reason
 *   `UtilityVolumesPresent`) added once, and `Failed` once the migration is older than the
 *   utility-volumes timeout (KubeVirt's `migrations.utilityVolumesTimeout`, 150 s, or the
 *   migration's `kubevirt.io/migrationUtilityVolumesTimeoutSeconds` annotation);
 * - a target pod refused by a ResourceQuota (`exceeded quota`): `migrationRejectedByResourceQuota`, until
 *   the migration leaves Pending; the relay wakes such migrations when a quota of their namespace
 *   changes or goes (wakes.ts).
 */
import type { VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationCondition } from '../../shared/api/index.ts';
import { MIGRATION_REJECTED_BY_QUOTA_CONDITION } from '../../shared/api/well-known.ts';

export const BLOCKED_BY_BACKUP = 'migrationBlockedByBackup';
export const BLOCKED_BY_UTILITY_VOLUMES = 'migrationBlockedByUtilityVolumes';
export const REJECTED_BY_RESOURCE_QUOTA = MIGRATION_REJECTED_BY_QUOTA_CONDITION;
export const UTILITY_VOLUMES_TIMEOUT_ANNOTATION = 'kubevirt.io/migrationUtilityVolumesTimeoutSeconds';
const SYSTEM_CRITICAL = 'system-critical';

export type PendingBlock =
  | { readonly kind: 'backup'; readonly backupName: string; readonly startTimestamp?: string; readonly critical: boolean; readonly message: string }
  | { readonly kind: 'utility-volumes'; readonly remainingSeconds: number; readonly event: string; readonly message: string }
  | { readonly kind: 'utility-volumes-timeout'; readonly failure: string };

/** KubeVirt's `IsBackupInProgress`. */
export function backupInProgress(vmi: VirtualMachineInstance): { name: string; startTimestamp?: string } | undefined {
  const bs = vmi.status?.changedBlockTracking?.backupStatus as { backupName?: string; completed?: boolean; startTimestamp?: string } | undefined;
  if (!bs?.backupName || bs.completed) return undefined;
  return { name: bs.backupName, ...(bs.startTimestamp ? { startTimestamp: bs.startTimestamp } : {}) };
}

/** KubeVirt's `VMIHasUtilityVolumes`. */
export function hasUtilityVolumes(vmi: VirtualMachineInstance): boolean {
  return ((vmi.spec as { utilityVolumes?: unknown[] }).utilityVolumes ?? []).length > 0;
}

/** The utility-volumes timeout in seconds: the annotation (when an integer), else the cluster's. */
export function utilityVolumesTimeoutSeconds(migration: VirtualMachineInstanceMigration, clusterSeconds: number): number {
  const raw = migration.metadata?.annotations?.[UTILITY_VOLUMES_TIMEOUT_ANNOTATION];
  return raw !== undefined && /^-?\d+$/.test(raw) ? Number(raw) : clusterSeconds;
}

/** What holds this Pending migration (the backup first, as in KubeVirt), or undefined. */
export function pendingBlock(migration: VirtualMachineInstanceMigration, vmi: VirtualMachineInstance, clusterTimeoutSeconds: number, nowMs: number): PendingBlock | undefined {
  const backup = backupInProgress(vmi);
  if (backup) {
    const critical = migration.spec.priority === SYSTEM_CRITICAL;
    return { kind: 'backup', backupName: backup.name, ...(backup.startTimestamp ? { startTimestamp: backup.startTimestamp } : {}), critical, message: critical ? `Aborting backup ${backup.name} for system-critical migration` : `Waiting for backup ${backup.name} to complete` };
  }
  if (!hasUtilityVolumes(vmi)) return undefined;
  const timeout = utilityVolumesTimeoutSeconds(migration, clusterTimeoutSeconds);
  const created = Date.parse(String(migration.metadata?.creationTimestamp ?? ''));
  const waited = Number.isNaN(created) ? 0 : Math.floor((nowMs - created) / 1000);
  const ref = `${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`;
  if (waited >= timeout) return { kind: 'utility-volumes-timeout', failure: `Migration timeout waiting for utility volumes to detach from VMI [${ref}]. Utility volumes still present after ${waited} seconds.` };
  const remaining = timeout - waited;
  return { kind: 'utility-volumes', remainingSeconds: remaining, event: `Migration waiting for utility volumes to detach from VMI [${ref}]. Will timeout in ${remaining} seconds.`, message: `Migration is waiting for utility volumes to detach. Will timeout in ${remaining} seconds.` };
}

/**
 * The migration's conditions after a pass that started in `''`/`Pending` (`startedPending`) and
 * ended in `endPhase`: the blocking conditions follow `block` (migrationBlockedByBackup replaced with each
 * pass's message, migrationBlockedByUtilityVolumes added once, each removed once its cause is gone);
 * migrationRejectedByResourceQuota is added when `quotaRejected` and goes once the migration is past Pending.
 */
export function pendingConditions(conds: readonly VirtualMachineInstanceMigrationCondition[] | undefined, pass: { readonly startedPending: boolean; readonly endPhase: string }, block: PendingBlock | undefined, quotaRejected: boolean, now: string): VirtualMachineInstanceMigrationCondition[] | undefined {
  let list = [...(conds ?? [])];
  const has = (t: string) => list.some((c) => c.type === t);
  const drop = (t: string) => { list = list.filter((c) => c.type !== t); };
  if (pass.startedPending) {
    if (block?.kind === 'backup') {
      // Replaced when its message changes only: a new probe time on every pass would be a write,
      // whose event wakes the migration again.
      if (list.find((c) => c.type === BLOCKED_BY_BACKUP)?.message !== block.message) {
        drop(BLOCKED_BY_BACKUP);
        list.push({ type: BLOCKED_BY_BACKUP, status: 'True', reason: 'BackupInProgress', message: block.message, lastProbeTime: now } as VirtualMachineInstanceMigrationCondition);
      }
    } else {
      drop(BLOCKED_BY_BACKUP);
      if (block?.kind === 'utility-volumes') {
        if (!has(BLOCKED_BY_UTILITY_VOLUMES)) list.push({ type: BLOCKED_BY_UTILITY_VOLUMES, status: 'True', reason: 'UtilityVolumesPresent', message: block.message, lastProbeTime: now } as VirtualMachineInstanceMigrationCondition);
      } else if (block === undefined) {
        drop(BLOCKED_BY_UTILITY_VOLUMES);
      }
    }
    if (quotaRejected && !has(REJECTED_BY_RESOURCE_QUOTA)) list.push({ type: REJECTED_BY_RESOURCE_QUOTA, status: 'True', lastProbeTime: now } as VirtualMachineInstanceMigrationCondition);
  }
  if (pass.endPhase !== '' && pass.endPhase !== 'Pending' && pass.endPhase !== 'Failed' && pass.endPhase !== 'Succeeded') drop(REJECTED_BY_RESOURCE_QUOTA);
  if (list.length === 0 && conds === undefined) return undefined;
  return list;
}
