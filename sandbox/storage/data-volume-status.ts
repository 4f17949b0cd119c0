/**
 * What CDI does with a DataVolume, as pure functions: the claim it needs (named after the
 * DataVolume, controller-owned by it) and the phase it reports from that claim — `Pending` until
 * the claim exists, `WaitForFirstConsumer` while a WFFC claim waits, `ImportInProgress` once bound,
 * `Succeeded` when the (simulated) population is done. A pre-populated DataVolume
 * (`cdi.kubevirt.io/storage.prePopulated`, as a restore creates) adopts the claim annotated
 * `cdi.kubevirt.io/storage.populatedFor=<dv>` and is `Succeeded` at once.
 */
import { controllerOf } from '../nodes/objects.ts';
import type { DataVolume, Pvc, StorageClass } from './objects.ts';
import { classOf } from './provisioning.ts';

export const PRE_POPULATED = 'cdi.kubevirt.io/storage.prePopulated';
export const POPULATED_FOR = 'cdi.kubevirt.io/storage.populatedFor';
export const ALLOW_CLAIM_ADOPTION = 'cdi.kubevirt.io/allowClaimAdoption';

/** The controller reference a DataVolume puts on its claim. */
export function dvOwnerRef(dv: DataVolume) {
  return { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: dv.metadata?.name ?? '', uid: dv.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** The claim CDI creates for a DataVolume that has none. */
export function renderDvClaim(dv: DataVolume): Pvc & Record<string, unknown> {
  const spec = dv.spec?.pvc ?? dv.spec?.storage ?? {};
  const snapshot = dv.spec?.source?.snapshot as { name?: string } | undefined;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: dv.metadata?.name ?? '',
      namespace: dv.metadata?.namespace ?? '',
      labels: { 'app': 'containerized-data-importer', 'app.kubernetes.io/component': 'storage', 'app.kubernetes.io/managed-by': 'cdi-controller' },
      annotations: { 'cdi.kubevirt.io/storage.contentType': dv.spec?.contentType ?? 'kubevirt' },
      ownerReferences: [dvOwnerRef(dv)],
    },
    spec: {
      accessModes: spec.accessModes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: spec.resources?.requests?.storage ?? '1Gi' } },
      ...(spec.storageClassName !== undefined ? { storageClassName: spec.storageClassName } : {}),
      volumeMode: spec.volumeMode ?? 'Filesystem',
      ...(snapshot?.name ? { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: snapshot.name } } : {}),
    },
  };
}

/** True when the DataVolume may take over `pvc` instead of populating a new one. */
export function adopts(dv: DataVolume, pvc: Pvc): boolean {
  const ann = dv.metadata?.annotations ?? {};
  if (controllerOf(pvc)) return false;
  if (pvc.metadata?.annotations?.[POPULATED_FOR] === dv.metadata?.name) return true;
  return ann[PRE_POPULATED] !== undefined || ann[ALLOW_CLAIM_ADOPTION] === 'true';
}

/** The next step for a DataVolume. */
export type DvStep =
  | { act: 'create-claim' }
  | { act: 'adopt-claim' }
  | { act: 'status'; phase: string; progress: string; populate: boolean }
  | undefined;

export function nextDvStep(dv: DataVolume, pvc: Pvc | undefined, classes: readonly StorageClass[]): DvStep {
  if (dv.metadata?.deletionTimestamp || dv.status?.phase === 'Succeeded') return undefined;
  const prePopulated = dv.metadata?.annotations?.[PRE_POPULATED] !== undefined;
  if (!pvc) return prePopulated ? { act: 'status', phase: 'Pending', progress: 'N/A', populate: false } : { act: 'create-claim' };
  const owner = controllerOf(pvc);
  if (!owner) return adopts(dv, pvc) ? { act: 'adopt-claim' } : { act: 'status', phase: 'Pending', progress: 'N/A', populate: false };
  if (owner.uid !== dv.metadata?.uid) return undefined; // someone else's claim: CDI leaves it alone
  // An adopted claim already holds the data: nothing to import.
  if (prePopulated || pvc.metadata?.annotations?.[POPULATED_FOR] === dv.metadata?.name) return { act: 'status', phase: 'Succeeded', progress: '100.0%', populate: false };
  if (pvc.status?.phase !== 'Bound') {
    const wffc = classOf(pvc, classes).sc?.volumeBindingMode === 'WaitForFirstConsumer';
    return { act: 'status', phase: wffc ? 'WaitForFirstConsumer' : 'Pending', progress: 'N/A', populate: false };
  }
  return { act: 'status', phase: 'Succeeded', progress: '100.0%', populate: true };
}

/** DataVolume conditions for a phase (Bound, Ready, Running), as CDI reports them. */
export function dvConditions(phase: string, claimName: string, nowIso: string) {
  const bound = phase === 'Succeeded' || phase === 'ImportInProgress';
  const ready = phase === 'Succeeded';
  const c = (type: string, ok: boolean, reason: string, message = '') => ({ type, status: ok ? 'True' : 'False', reason, message, lastHeartbeatTime: nowIso, lastTransitionTime: nowIso });
  return [
    c('Bound', bound, bound ? 'Bound' : 'Pending', bound ? `PVC ${claimName} Bound` : `PVC ${claimName} Pending`),
    c('Ready', ready, ready ? 'Ready' : 'TransferRunning'),
    c('Running', false, ready ? 'Completed' : 'Pending'),
  ];
}
