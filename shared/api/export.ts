/**
 * `export.kubevirt.io/v1` VirtualMachineExport, as far as the export controller reads and writes
 * it (the CRD in infra/crds/kubevirt/ is the full schema), and the snapshot.kubevirt.io and
 * snapshot.storage.k8s.io objects an export of a snapshot reads.
 */
import type { StorageCondition } from '../storage/conditions.ts';
import type { ObjectMeta } from './kubevirt.gen.ts';

/** A condition as KubeVirt's storage APIs carry it (export, snapshot, restore). */
export type StorageApiCondition = StorageCondition;

export interface TypedLocalObjectReference {
  apiGroup?: string | null;
  kind: string;
  name: string;
}

export interface ExportVolumeFormat {
  format: string;
  url: string;
}

export interface ExportLink {
  cert: string;
  volumes?: { name: string; formats: ExportVolumeFormat[] }[];
  manifests?: { type: string; url: string }[];
  backups?: { name: string; endpoints: { endpoint: string; url: string }[] }[];
}

export interface VirtualMachineExportStatus {
  phase?: string;
  conditions?: StorageApiCondition[];
  links?: { internal?: ExportLink; external?: ExportLink };
  tokenSecretRef?: string;
  ttlExpirationTime?: string;
  serviceName?: string;
  virtualMachineName?: string;
}

export interface VirtualMachineExport {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: { source: TypedLocalObjectReference; tokenSecretRef?: string; ttlDuration?: string };
  status?: VirtualMachineExportStatus;
}

/** `snapshot.kubevirt.io/v1beta1` VirtualMachineSnapshot: what an export of it reads. */
export interface VirtualMachineSnapshotObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { source?: { apiGroup?: string; kind?: string; name?: string }; [field: string]: unknown };
  status?: { readyToUse?: boolean; virtualMachineSnapshotContentName?: string; phase?: string; [field: string]: unknown };
}

/** One volume of a snapshot content: the claim it was taken of and its VolumeSnapshot. */
export interface SnapshotVolumeBackup {
  volumeName: string;
  persistentVolumeClaim: { metadata: ObjectMeta; spec: Record<string, unknown> };
  volumeSnapshotName?: string;
}

/** `snapshot.kubevirt.io/v1beta1` VirtualMachineSnapshotContent. */
export interface VirtualMachineSnapshotContentObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: {
    virtualMachineSnapshotName?: string;
    source?: { virtualMachine?: { metadata?: ObjectMeta; spec?: Record<string, unknown> } };
    volumeBackups?: SnapshotVolumeBackup[];
  };
  status?: { readyToUse?: boolean; creationTime?: string | null; volumeSnapshotStatus?: { volumeSnapshotName: string; readyToUse?: boolean }[]; [field: string]: unknown };
}

/** `snapshot.storage.k8s.io/v1` VolumeSnapshot (CSI). */
export interface CsiVolumeSnapshot {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
  status?: { creationTime?: string; readyToUse?: boolean; restoreSize?: string; [field: string]: unknown };
}
