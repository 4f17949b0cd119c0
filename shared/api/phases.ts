/**
 * Phase and printable-status values KubeVirt writes. The OpenAPI spec types these fields as plain
 * strings, so the generated types say `string`; these unions name the values the controllers
 * compare against (see ../shared/kubevirt/reference.md §a.4, §d.3 and the VM printableStatus list).
 */

/** `VirtualMachineInstance.status.phase`; `''` = not yet processed. */
export type VirtualMachineInstancePhase =
  | ''
  | 'Pending'
  | 'Scheduling'
  | 'Scheduled'
  | 'Running'
  | 'Succeeded'
  | 'Failed'
  | 'WaitingForSync'
  | 'Unknown';

/** `VirtualMachineInstanceMigration.status.phase`; `''` = not yet processed. */
export type MigrationPhase =
  | ''
  | 'Pending'
  | 'Scheduling'
  | 'Scheduled'
  | 'PreparingTarget'
  | 'TargetReady'
  | 'Running'
  | 'Succeeded'
  | 'Failed'
  | 'WaitingForSync'
  | 'Synchronizing';

/** `VirtualMachine.status.printableStatus`, as `kubectl get vm` shows it. */
export type VirtualMachinePrintableStatus =
  | 'Stopped'
  | 'Provisioning'
  | 'Starting'
  | 'Running'
  | 'Paused'
  | 'Stopping'
  | 'Terminating'
  | 'CrashLoopBackOff'
  | 'Migrating'
  | 'Unknown'
  | 'ErrorUnschedulable'
  | 'ErrImagePull'
  | 'ImagePullBackOff'
  | 'ErrorPvcNotFound'
  | 'DataVolumeError'
  | 'WaitingForVolumeBinding'
  | 'WaitingForReceiver';

/** Phases after which a VMI never runs again. */
export const VMI_FINAL_PHASES: readonly VirtualMachineInstancePhase[] = ['Succeeded', 'Failed'];
/** Phases after which a migration is finished. */
export const MIGRATION_FINAL_PHASES: readonly MigrationPhase[] = ['Succeeded', 'Failed'];
