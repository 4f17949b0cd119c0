/**
 * The restore PVC of one volume (reference §2.4 "Restore PVC"), as a pure render: named by the
 * restore entry, the backup claim's labels (minus `persistent-state-for`) and annotations (minus
 * the provisioner's and CDI's, `cdi.kubevirt.io/storage.contentType` kept) plus the restore's
 * own, the override's on top; the backup claim's access modes, resources, class and volume mode;
 * the VolumeSnapshot as dataSource and dataSourceRef; at least the snapshot's restoreSize; owned
 * by the target VM, or marked for it, or pre-populated for a DataVolume.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineRestore, VolumeBackup, VolumeRestore, VolumeSnapshot } from '../../shared/api/snapshot.ts';
import { BACKEND_LABEL } from '../../shared/storage/vm-volumes.ts';
import { compareQuantity, parseQuantity } from '../../shared/api/quantity.ts';
import {
  CONTENT_TYPE_ANNOTATION,
  LAST_RESTORE_UID_ANNOTATION,
  OWNED_BY_VM_ANNOTATION,
  POPULATED_FOR_ANNOTATION,
  RESTORE_NAME_ANNOTATION,
  restoreAnnotationValue,
  SOURCE_VM_NAME_LABEL,
  SOURCE_VM_NAMESPACE_LABEL,
} from './names.ts';

const DROPPED_PREFIXES = ['pv.kubernetes.io', 'volume.beta.kubernetes.io', 'cdi.kubevirt.io', 'volume.kubernetes.io', 'k8s.io/CloneRequest', 'k8s.io/CloneOf'];

export interface RestorePvcInput {
  restore: VirtualMachineRestore;
  entry: VolumeRestore;
  backup: VolumeBackup;
  vs: VolumeSnapshot;
  /** The source VM as the content recorded it. */
  sourceVm: { name: string; namespace: string; uid: string };
  /** The target VM, when it exists. */
  target: { name: string; uid: string } | undefined;
}

/** True when `restoreSize` should replace the request (larger, or no request). */
function biggerSize(request: string | undefined, restoreSize: string | undefined): boolean {
  if (!restoreSize) return false;
  if (!request) return true;
  try {
    return compareQuantity(parseQuantity(restoreSize), parseQuantity(request)) > 0;
  } catch {
    return false;
  }
}

export function renderRestorePvc(i: RestorePvcInput): V1PersistentVolumeClaim {
  const { restore, entry, backup, vs } = i;
  const meta = backup.persistentVolumeClaim.metadata ?? {};
  const spec = backup.persistentVolumeClaim.spec as { accessModes?: string[]; resources?: { requests?: Record<string, string>; limits?: Record<string, string> }; storageClassName?: string; volumeMode?: string };
  const override = restore.spec?.volumeRestoreOverrides?.find((o) => o.volumeName === entry.volumeName);
  const labels: Record<string, string> = { ...(meta.labels ?? {}) };
  delete labels[BACKEND_LABEL];
  labels[SOURCE_VM_NAME_LABEL] = i.sourceVm.name;
  labels[SOURCE_VM_NAMESPACE_LABEL] = i.sourceVm.namespace;
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    if (k !== CONTENT_TYPE_ANNOTATION && DROPPED_PREFIXES.some((p) => k.startsWith(p))) continue;
    annotations[k] = v;
  }
  annotations[RESTORE_NAME_ANNOTATION] = restore.metadata?.name ?? '';
  annotations[LAST_RESTORE_UID_ANNOTATION] = restoreAnnotationValue(restore);
  Object.assign(labels, override?.labels ?? {});
  Object.assign(annotations, override?.annotations ?? {});

  const requests = { ...(spec.resources?.requests ?? {}) };
  if (biggerSize(requests.storage, vs.status?.restoreSize)) requests.storage = vs.status!.restoreSize!;
  const source = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: vs.metadata?.name ?? '' };

  let ownerReferences: NonNullable<V1PersistentVolumeClaim['metadata']>['ownerReferences'];
  if (entry.dataVolumeName) annotations[POPULATED_FOR_ANNOTATION] = entry.dataVolumeName;
  else if (restore.spec?.volumeOwnershipPolicy !== 'None') {
    if (i.target) ownerReferences = [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: i.target.name, uid: i.target.uid, controller: true, blockOwnerDeletion: true }];
    else if (meta.ownerReferences?.some((o) => o.kind === 'VirtualMachine' && o.name === i.sourceVm.name && o.uid === i.sourceVm.uid)) annotations[OWNED_BY_VM_ANNOTATION] = restore.metadata?.name ?? '';
  }
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: entry.persistentVolumeClaim, namespace: restore.metadata?.namespace ?? '', labels, annotations, ...(ownerReferences ? { ownerReferences } : {}) },
    spec: {
      ...(spec.accessModes ? { accessModes: spec.accessModes } : {}),
      resources: { ...(spec.resources ?? {}), requests },
      ...(spec.storageClassName ? { storageClassName: spec.storageClassName } : {}),
      ...(spec.volumeMode ? { volumeMode: spec.volumeMode } : {}),
      dataSource: source,
      dataSourceRef: source,
    },
  };
}
