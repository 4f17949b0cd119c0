/** The names, finalizers and labels KubeVirt's snapshot controller uses (reference §1, quoted exactly). */

export const SNAPSHOT_FINALIZER = 'snapshot.kubevirt.io/vmsnapshot-protection';
export const CONTENT_FINALIZER = 'snapshot.kubevirt.io/vmsnapshotcontent-protection';
export const SOURCE_FINALIZER = 'snapshot.kubevirt.io/snapshot-source-protection';
export const SOURCE_VM_NAME_LABEL = 'snapshot.kubevirt.io/source-vm-name';
export const SOURCE_VM_NAMESPACE_LABEL = 'snapshot.kubevirt.io/source-vm-namespace';
export const DEFAULT_VSC_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

/** `DefaultFailureDeadline`. */
export const DEFAULT_FAILURE_DEADLINE_MS = 5 * 60_000;
/** `snapshotRetryInterval`: the fixed requeue after a lock attempt, a content being deleted, a failed freeze. */
export const SNAPSHOT_RETRY_SECONDS = 5;

export const contentNameFor = (snapshotUid: string) => `vmsnapshot-content-${snapshotUid}`;
export const volumeSnapshotNameFor = (snapshotUid: string, volumeName: string) => `vmsnapshot-${snapshotUid}-volume-${volumeName}`;
