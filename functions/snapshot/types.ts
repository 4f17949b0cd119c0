/**
 * The snapshot.kubevirt.io/v1beta1 and snapshot.storage.k8s.io/v1 shapes this controller reads
 * and writes, as far as it reads them (the CRDs in infra/crds/ are the full schema).
 */
import type { ObjectMeta } from '../../shared/api/index.ts';
import type { StorageCondition } from '../../shared/storage/conditions.ts';
import type { VolumeLike } from '../../shared/storage/vm-volumes.ts';

/** Object metadata as KubeVirt's generated types declare it. */
export type Meta = ObjectMeta;

export interface SourceIndication {
  indication: string;
  message: string;
}

export interface VirtualMachineSnapshot {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: {
    source?: { apiGroup?: string; kind?: string; name?: string };
    deletionPolicy?: string;
    failureDeadline?: string;
  };
  status?: SnapshotStatus;
}

export interface SnapshotError {
  time?: string;
  message?: string;
}

export interface SnapshotStatus {
  sourceUID?: string;
  virtualMachineSnapshotContentName?: string;
  creationTime?: string | null;
  phase?: string;
  readyToUse?: boolean;
  error?: SnapshotError | null;
  conditions?: StorageCondition[];
  indications?: string[] | null;
  sourceIndications?: SourceIndication[] | null;
  snapshotVolumes?: { includedVolumes?: string[]; excludedVolumes?: string[] };
}

export interface VolumeBackup {
  volumeName: string;
  persistentVolumeClaim: { metadata: Meta; spec: Record<string, unknown> };
  volumeSnapshotName?: string;
}

export interface VolumeSnapshotStatusEntry {
  volumeSnapshotName: string;
  creationTime?: string;
  readyToUse?: boolean;
  error?: SnapshotError;
}

export interface VirtualMachineSnapshotContent {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: {
    virtualMachineSnapshotName?: string;
    source?: { virtualMachine?: { metadata?: Meta; spec?: VmSpec; status?: Record<string, unknown> } };
    volumeBackups?: VolumeBackup[];
  };
  status?: {
    creationTime?: string | null;
    readyToUse?: boolean;
    error?: SnapshotError | null;
    volumeSnapshotStatus?: VolumeSnapshotStatusEntry[];
  };
}

export type Volume = VolumeLike;

export interface VmSpec {
  template?: { metadata?: Meta; spec?: { volumes?: Volume[]; domain?: { devices?: { disks?: unknown[]; tpm?: { persistent?: boolean }; }; firmware?: { bootloader?: { efi?: { persistent?: boolean } } } } } };
  dataVolumeTemplates?: { metadata?: Meta; spec?: Record<string, unknown> }[];
  instancetype?: { name?: string; revisionName?: string };
  preference?: { name?: string; revisionName?: string };
  [field: string]: unknown;
}

export interface VirtualMachine {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: VmSpec;
  status?: { snapshotInProgress?: string | null; volumeSnapshotStatuses?: unknown[]; changedBlockTracking?: { state?: string }; [field: string]: unknown };
}

export interface Vmi {
  metadata?: Meta;
  status?: { phase?: string; conditions?: { type: string; status: string }[]; fsFreezeStatus?: string; virtualMachineRevisionName?: string };
}

export interface Pvc {
  metadata?: Meta;
  spec?: { storageClassName?: string; volumeMode?: string; resources?: { requests?: Record<string, string> }; [field: string]: unknown };
  status?: { phase?: string };
}

export interface VolumeSnapshot {
  metadata?: Meta;
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
  status?: { creationTime?: string; readyToUse?: boolean; restoreSize?: string; error?: SnapshotError };
}

export interface VolumeSnapshotClass {
  metadata?: Meta;
  driver?: string;
}

export interface StorageClass {
  metadata?: Meta;
  provisioner?: string;
}
