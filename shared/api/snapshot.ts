/**
 * The snapshot.kubevirt.io/v1beta1, clone.kubevirt.io/v1beta1 and snapshot.storage.k8s.io/v1
 * shapes the storage controllers (snapshot, restore, clone) read and write, as far as they read
 * them (the CRDs in infra/crds/ are the full schema). The VM and VMI shapes here are the loose
 * views those controllers take (the full ones are in kubevirt.gen.ts).
 */
import type { ObjectMeta } from './index.ts';
import type { StorageCondition } from '../storage/conditions.ts';
import type { VolumeLike } from '../storage/vm-volumes.ts';

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
  [field: string]: unknown;
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
  apiVersion?: string;
  kind?: string;
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
  volumeBindingMode?: string;
}

/** `snapshot.kubevirt.io/v1beta1` VirtualMachineRestore, as far as the restore controller reads it. */
export interface VirtualMachineRestore {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: {
    target?: { apiGroup?: string; kind?: string; name?: string };
    virtualMachineSnapshotName?: string;
    patches?: string[];
    targetReadinessPolicy?: string;
    volumeRestorePolicy?: string;
    volumeOwnershipPolicy?: string;
    volumeRestoreOverrides?: { volumeName?: string; restoreName?: string; labels?: Record<string, string>; annotations?: Record<string, string> }[];
  };
  status?: RestoreStatus;
}

export interface VolumeRestore {
  volumeName: string;
  persistentVolumeClaim: string;
  volumeSnapshotName: string;
  dataVolumeName?: string;
}

export interface RestoreStatus {
  complete?: boolean;
  conditions?: StorageCondition[];
  restoreTime?: string;
  restores?: VolumeRestore[];
  deletedDataVolumes?: string[];
}

/** `clone.kubevirt.io/v1beta1` VirtualMachineClone, as far as the clone controller reads it. */
export interface VirtualMachineClone {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: {
    source?: { apiGroup?: string; kind?: string; name?: string };
    target?: { apiGroup?: string; kind?: string; name?: string };
    labelFilters?: string[];
    annotationFilters?: string[];
    template?: { labelFilters?: string[]; annotationFilters?: string[] };
    newMacAddresses?: Record<string, string>;
    newSMBiosSerial?: string;
    patches?: string[];
    volumeNamePolicy?: string;
  };
  status?: {
    phase?: string;
    conditions?: StorageCondition[];
    snapshotName?: string | null;
    restoreName?: string | null;
    targetName?: string | null;
    creationTime?: string;
  };
}
