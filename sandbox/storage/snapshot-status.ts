/**
 * What the CSI external-snapshotter (with its sidecar and a CSI driver) would report for one
 * VolumeSnapshot, as a pure function: nothing until its source PVC is Bound and its class exists,
 * then `creationTime` (+ `restoreSize` = the PVC's request, `boundVolumeSnapshotContentName`)
 * with `readyToUse=false` (the driver cut the snapshot), then `readyToUse=true` (it is uploaded).
 * An injected failure is reported as `status.error{message,time}`, as the sidecar does.
 */
import type { Pvc, VolumeSnapshot } from './objects.ts';

export interface SnapshotFacts {
  /** The source PVC, if it exists. */
  pvc: Pvc | undefined;
  /** The VolumeSnapshotClass named by the snapshot exists (or none is named). */
  classFound: boolean;
  /** A failure injected by a test for this snapshot. */
  failure: string | undefined;
  nowIso: string;
}

/** The next step: a status to merge in (`after` = which delay must pass first), or nothing to do. */
export type SnapshotStep = { step: 'create' | 'ready' | 'error'; status: Record<string, unknown> } | undefined;

export function nextSnapshotStep(vs: VolumeSnapshot, f: SnapshotFacts): SnapshotStep {
  const st = vs.status ?? {};
  if (vs.metadata?.deletionTimestamp) return undefined;
  if (f.failure !== undefined) {
    if (st.error?.message === f.failure && st.readyToUse === false) return undefined;
    return { step: 'error', status: { readyToUse: false, error: { message: f.failure, time: f.nowIso } } };
  }
  const className = vs.spec?.volumeSnapshotClassName;
  if (!f.classFound) {
    const message = `Failed to set default snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "${className ?? ''}" not found`;
    if (st.error?.message === message) return undefined;
    return { step: 'error', status: { readyToUse: false, error: { message, time: f.nowIso } } };
  }
  const claim = vs.spec?.source?.persistentVolumeClaimName;
  if (!claim) return undefined; // pre-provisioned snapshots (volumeSnapshotContentName) are not simulated
  if (!st.creationTime) {
    // The sidecar waits for a bound claim before it asks the driver for a snapshot.
    if (f.pvc?.status?.phase !== 'Bound') return undefined;
    const size = f.pvc.status.capacity?.storage ?? f.pvc.spec?.resources?.requests?.storage;
    return {
      step: 'create',
      status: {
        boundVolumeSnapshotContentName: `snapcontent-${vs.metadata?.uid ?? ''}`,
        creationTime: f.nowIso,
        readyToUse: false,
        ...(size ? { restoreSize: size } : {}),
        error: null,
      },
    };
  }
  if (st.readyToUse !== true) return { step: 'ready', status: { readyToUse: true, error: null } };
  return undefined;
}
