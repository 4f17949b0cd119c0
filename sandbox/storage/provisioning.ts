/**
 * When a claim can be provisioned and what its PersistentVolume looks like, as pure functions:
 * the StorageClass must exist and name a provisioner; `WaitForFirstConsumer` waits for a pod that
 * mounts the claim to be scheduled (the node it landed on); a claim restored from a VolumeSnapshot
 * waits for the snapshot to be ready and gets at least its `restoreSize`.
 */
import { ATTACH_REQUIRED_ANNOTATION, DEFAULT_CLASS_ANNOTATION, type Pv, type Pvc, type StorageClass, type VolumeSnapshot } from './objects.ts';
import { parseQuantity } from '../nodes/quantity.ts';

export interface ClaimFacts {
  classes: readonly StorageClass[];
  /** Node of a scheduled pod that mounts the claim (WaitForFirstConsumer), if any. */
  consumerNode: string | undefined;
  /** The VolumeSnapshot the claim restores from, when its data source names one. */
  snapshot: VolumeSnapshot | undefined;
}

/** Why a claim waits, or the class to provision it with. */
export type ClaimDecision = { wait: string } | { provision: StorageClass; size: string | undefined; node: string | undefined };

/** The class a claim uses: the one it names, else the default class ("" = no dynamic provisioning). */
export function classOf(pvc: Pvc, classes: readonly StorageClass[]): { name: string | undefined; sc: StorageClass | undefined } {
  const named = pvc.spec?.storageClassName;
  if (named !== undefined && named !== null) return { name: named, sc: named === '' ? undefined : classes.find((c) => c.metadata?.name === named) };
  const def = classes.find((c) => c.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true');
  return { name: def?.metadata?.name, sc: def };
}

const snapshotSource = (pvc: Pvc) => {
  const ref = pvc.spec?.dataSourceRef ?? pvc.spec?.dataSource;
  return ref?.kind === 'VolumeSnapshot' && ref.apiGroup === 'snapshot.storage.k8s.io' ? ref.name : undefined;
};

/** The VolumeSnapshot name a claim restores from, if any. */
export function restoredFrom(pvc: Pvc): string | undefined {
  return snapshotSource(pvc);
}

export function decideClaim(pvc: Pvc, f: ClaimFacts): ClaimDecision | undefined {
  if (pvc.metadata?.deletionTimestamp || pvc.status?.phase === 'Bound' || pvc.spec?.volumeName) return undefined;
  const { name, sc } = classOf(pvc, f.classes);
  if (!name) return { wait: 'no storage class: static binding is not simulated' };
  if (!sc) return { wait: `storageclass.storage.k8s.io "${name}" not found` };
  if (!sc.provisioner || sc.provisioner === 'kubernetes.io/no-provisioner') return { wait: `storage class ${name} has no dynamic provisioner` };
  if (sc.volumeBindingMode === 'WaitForFirstConsumer' && !f.consumerNode) return { wait: 'waiting for first consumer to be created before binding' };
  let size = pvc.spec?.resources?.requests?.storage;
  if (snapshotSource(pvc)) {
    if (f.snapshot?.status?.readyToUse !== true) return { wait: `waiting for VolumeSnapshot ${snapshotSource(pvc)} to be ready` };
    const restoreSize = f.snapshot.status.restoreSize;
    if (restoreSize && (!size || parseQuantity(restoreSize) > parseQuantity(size))) size = restoreSize;
  }
  return { provision: sc, size, node: sc.volumeBindingMode === 'WaitForFirstConsumer' ? f.consumerNode : undefined };
}

/** The PersistentVolume the provisioner creates for `pvc`, pre-bound to it by claimRef. */
export function renderPv(pvc: Pvc, d: { provision: StorageClass; size: string | undefined; node: string | undefined }): Pv & Record<string, unknown> {
  const m = pvc.metadata ?? {};
  const provisioner = d.provision.provisioner ?? '';
  const name = `pvc-${m.uid ?? ''}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': provisioner, ...(d.provision.parameters?.['attachRequired'] === 'true' ? { [ATTACH_REQUIRED_ANNOTATION]: 'true' } : {}) } },
    spec: {
      capacity: { storage: d.size ?? '1Gi' },
      accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: d.provision.reclaimPolicy ?? 'Delete',
      storageClassName: d.provision.metadata?.name ?? '',
      volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '', resourceVersion: m.resourceVersion ?? '' },
      csi: { driver: provisioner, volumeHandle: name, fsType: 'ext4' },
      ...(d.node
        ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [d.node] }] }] } } }
        : {}),
    },
  };
}
