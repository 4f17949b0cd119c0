/**
 * The storage shapes the sandbox's storage agents read, as plain JSON: PVCs, PVs, StorageClasses,
 * CSI VolumeSnapshots and CDI DataVolumes. Only the fields the agents look at are declared;
 * everything else passes through untouched because the agents write patches, never whole objects.
 */
import type { Condition, KubeObject, StringMap } from '../nodes/objects.ts';

export interface TypedReference {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

export interface PvcSpec {
  accessModes?: string[];
  resources?: { requests?: StringMap };
  storageClassName?: string;
  volumeMode?: string;
  volumeName?: string;
  dataSource?: TypedReference;
  dataSourceRef?: TypedReference;
}

export interface Pvc extends KubeObject {
  spec?: PvcSpec;
  status?: { phase?: string; capacity?: StringMap; accessModes?: string[] };
}

export interface Pv extends KubeObject {
  spec?: {
    capacity?: StringMap;
    claimRef?: { apiVersion?: string; kind?: string; namespace?: string; name?: string; uid?: string; resourceVersion?: string };
    persistentVolumeReclaimPolicy?: string;
    storageClassName?: string;
    [field: string]: unknown;
  };
  status?: { phase?: string };
}

export interface StorageClass extends KubeObject {
  provisioner?: string;
  volumeBindingMode?: string;
  reclaimPolicy?: string;
  parameters?: Record<string, string>;
}

/**
 * On a PV: its volume needs attaching to a node (what a CSIDriver's `attachRequired` says; the
 * emulator serves no CSIDriver objects, so the provisioner records it from the class parameter
 * `attachRequired: "true"`). Only such volumes meet the attach/detach controller's Multi-Attach
 * refusal; the sandbox's own classes, like hostpath-provisioner, are not attachable.
 */
export const ATTACH_REQUIRED_ANNOTATION = 'sandbox.virt-reconciler.io/attach-required';

export interface VolumeSnapshot extends KubeObject {
  spec?: { source?: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string }; volumeSnapshotClassName?: string };
  status?: {
    boundVolumeSnapshotContentName?: string;
    creationTime?: string;
    readyToUse?: boolean;
    restoreSize?: string;
    error?: { message?: string; time?: string };
  };
}

export interface DataVolume extends KubeObject {
  spec?: {
    pvc?: PvcSpec;
    storage?: PvcSpec;
    source?: Record<string, unknown>;
    contentType?: string;
  };
  status?: { phase?: string; progress?: string; claimName?: string; conditions?: Condition[] };
}

/** API coordinates of the custom and non-core resources the agents use (CustomObjectsApi shape). */
export const VOLUME_SNAPSHOTS = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots' } as const;
export const VOLUME_SNAPSHOT_CLASSES = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotclasses' } as const;
export const STORAGE_CLASSES = { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses' } as const;
export const DATA_VOLUMES = { group: 'cdi.kubevirt.io', version: 'v1beta1', plural: 'datavolumes' } as const;

/** The annotation that makes a StorageClass the default for claims that name none. */
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/** The claim names a pod mounts. */
export function claimsOf(pod: { spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } }): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));
}
