/**
 * `backup.kubevirt.io/v1alpha1` VirtualMachineBackup and VirtualMachineBackupTracker, as far as
 * the backup controller reads and writes them (the CRDs in infra/crds/kubevirt/ are the full
 * schema). Their conditions are `metav1.Condition`s.
 */
import type { ObjectMeta } from './kubevirt.gen.ts';

/** A `metav1.Condition`. */
export interface MetaCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface BackupSourceRef {
  apiGroup?: string | null;
  kind: string;
  name: string;
}

export interface BackupIncludedVolume {
  volumeName: string;
  dataEndpoint?: string;
  mapEndpoint?: string;
}

export interface VirtualMachineBackupStatus {
  type?: string;
  checkpointName?: string;
  includedVolumes?: BackupIncludedVolume[];
  endpointCert?: string;
  exportUID?: string;
  conditions?: MetaCondition[];
}

export interface VirtualMachineBackup {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: {
    source: BackupSourceRef;
    mode?: 'Push' | 'Pull' | string;
    pvcName?: string;
    skipQuiesce?: boolean;
    forceFullBackup?: boolean;
    ttlDuration?: string;
    tokenSecretRef?: string;
  };
  status?: VirtualMachineBackupStatus;
}

export interface BackupCheckpoint {
  name: string;
  creationTime?: string;
  volumes?: { volumeName: string }[];
}

export interface VirtualMachineBackupTracker {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: { source: BackupSourceRef };
  status?: { latestCheckpoint?: BackupCheckpoint; checkpointRedefinitionRequired?: boolean };
}
