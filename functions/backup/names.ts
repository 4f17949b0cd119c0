/**
 * The backup controller's names and texts, exactly as KubeVirt spells them
 * (reference-snapshot-export-backup.md §4): the finalizer, the utility volume
 * `GetName(<backup>, "backup-target-pvc", 63)`, where the hotplugged target is mounted, the
 * condition types and reasons, the event reasons.
 */
import { getName } from '../../shared/storage/get-name.ts';
export { HOTPLUG_DISKS_PATH } from '../../shared/api/well-known.ts';

export const BACKUP_API_VERSION = 'backup.kubevirt.io/v1alpha1';
export const KIND_BACKUP = 'VirtualMachineBackup';
export const KIND_TRACKER = 'VirtualMachineBackupTracker';
export const BACKUP_FINALIZER = 'backup.kubevirt.io/vmbackup-protection';

/** The utility volume that hotplugs the backup's target claim into the VMI. */
export const utilityVolumeNameOf = (backupName: string) => getName(backupName, 'backup-target-pvc', 63);

/** Pull mode's default lifetime. */
export const DEFAULT_PULL_TTL_MS = 2 * 60 * 60 * 1000;

export const COND = { progressing: 'Progressing', complete: 'Complete', failed: 'Failed', quiesced: 'Quiesced' } as const;

export const REASON = {
  initializing: 'Initializing',
  initiated: 'Initiated',
  aborting: 'Aborting',
  completed: 'Completed',
  completedWithWarning: 'CompletedWithWarning',
  failed: 'Failed',
  deletedDuringInit: 'DeletedDuringInit',
  sourceLost: 'SourceLost',
  sourceUnhealthy: 'SourceUnhealthy',
  quiesceSucceeded: 'QuiesceSucceeded',
  quiesceFailed: 'QuiesceFailed',
  quiesceSkipped: 'QuiesceSkipped',
} as const;

export const EVENT = {
  failed: 'VirtualMachineBackupFailed',
  aborting: 'VirtualMachineBackupAborting',
  completed: 'VirtualMachineBackupCompletedSuccessfully',
  completedWithWarning: 'VirtualMachineBackupCompletedWithWarning',
  checkpointRedefinitionFailed: 'CheckpointRedefinitionFailed',
} as const;

/** The error a pass ends with while cleanup (detaching the target, clearing backupStatus) is not finished. */
export const CLEANUP_PENDING = 'cleanup pending';
