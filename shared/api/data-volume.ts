/**
 * CDI's DataVolume (`cdi.kubevirt.io/v1beta1`). KubeVirt's OpenAPI spec carries the DataVolume
 * *spec* and its sources (generated into kubevirt.gen.ts) but not the object envelope nor its
 * status, so those two are written here from CDI's API (`pkg/apis/core/v1beta1/types.go`), limited
 * to the fields the controllers read.
 */
import type { DataVolumeSpec, ObjectMeta } from './kubevirt.gen.ts';

/**
 * DataVolume phases as CDI reports them. The controllers care about `Succeeded`,
 * `PendingPopulation` and `WaitForFirstConsumer` (ready / waiting for a consumer) and `Failed`;
 * the others mean "in progress". Kept open (`string & {}`) because CDI adds phases over time.
 */
export type DataVolumePhase =
  | ''
  | 'Pending'
  | 'PVCBound'
  | 'ImportScheduled'
  | 'ImportInProgress'
  | 'CloneScheduled'
  | 'CloneInProgress'
  | 'UploadScheduled'
  | 'UploadReady'
  | 'WaitForFirstConsumer'
  | 'PendingPopulation'
  | 'Succeeded'
  | 'Failed'
  | 'Unknown'
  | 'Paused'
  | (string & {});

/** One DataVolume condition (`Bound`, `Ready`, `Running`). */
export interface DataVolumeCondition {
  type: 'Bound' | 'Ready' | 'Running' | (string & {});
  status: 'True' | 'False' | 'Unknown' | (string & {});
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
  reason?: string;
  message?: string;
}

/** Observed state of a DataVolume. */
export interface DataVolumeStatus {
  /** Name of the PVC that holds the data (may differ from the DV name when adopted). */
  claimName?: string;
  phase?: DataVolumePhase;
  /** Import/clone/upload progress, e.g. `"45.5%"` or `"N/A"`. */
  progress?: string;
  restartCount?: number;
  conditions?: DataVolumeCondition[];
}

/** A CDI DataVolume: an import/clone/upload that populates a PVC of the same name. */
export interface DataVolume {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: DataVolumeSpec;
  status?: DataVolumeStatus;
}
