/** KubeVirt's grouping of a VM's printable status, as `kubevirt_vm_info{status_group}` reports it. */

const GROUPS: Readonly<Record<string, readonly string[]>> = {
  starting: ['Provisioning', 'Starting', 'WaitingForVolumeBinding'],
  running: ['Running'],
  migrating: ['Migrating'],
  non_running: ['Stopped', 'Paused', 'Stopping', 'Terminating'],
  error: ['CrashLoopBackOff', 'Unknown', 'ErrorUnschedulable', 'ErrImagePull', 'ImagePullBackOff', 'ErrorPvcNotFound', 'DataVolumeError'],
};

const GROUP_OF = new Map(Object.entries(GROUPS).flatMap(([group, statuses]) => statuses.map((s) => [s, group] as const)));

/** The group of a printable status; `<unknown>` for one in no group (an empty status too). */
export function statusGroupOf(printableStatus: string): string {
  return GROUP_OF.get(printableStatus) ?? '<unknown>';
}
