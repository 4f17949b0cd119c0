/** The VM pool controller's constants (KubeVirt's `pkg/virt-controller/watch/pool`), spelled as upstream. */

/** The finalizer on pools and on the VMs they create. */
export const POOL_FINALIZER = 'pool.kubevirt.io/finalizer';
/** VM (and VM template, hence VMI) label naming the ControllerRevision the VM was rendered from. */
export const REVISION_LABEL = 'kubevirt.io/vm-pool-revision-name';
export const KIND_POOL = 'VirtualMachinePool';
export const POOL_API_VERSION = 'pool.kubevirt.io/v1beta1';
/** `defaultRetryDelay`: how soon a proactive update whose unavailability budget ran out looks again. */
export const RETRY_DELAY_SECONDS = 3;
/** KubeVirt's `BurstReplicas`: at most this many VMs are created or deleted in one pass. */
export const BURST_REPLICAS = 250;

/** Sync error reasons (the `ReplicaFailure` condition's reason and a Warning event's). */
export type SyncReason = 'FailedScaleOut' | 'FailedScaleIn' | 'FailedUpdate' | 'FailedRevisionPruning';

/** What went wrong in a pass: becomes the `ReplicaFailure` condition and a retry. */
export interface SyncError {
  readonly reason: SyncReason;
  readonly message: string;
}
