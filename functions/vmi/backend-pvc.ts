/**
 * The VMI's backend storage (reference-vm-vmi-depth §2): the PVC that keeps a persistent TPM's or
 * EFI's state (and changed-block-tracking overlays) across restarts, made before the launcher pod
 * and removed when no longer needed.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import type { StorageClass } from '../../shared/api/snapshot.ts';
import { PVCS, STORAGE_CLASSES, STORAGE_PROFILES } from '../../shared/api/resources.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { errorText } from '../../shared/errors.ts';
import { expectationsGate } from '../../shared/reconcile/expectations-gate.ts';
import { BACKEND_PVC_LABEL, backendClassAndMode, backendPvcFor, backendPvcReadiness, backendStorageNeeded, renderBackendPvc } from '../../shared/storage/backend-storage.ts';
import { BACKEND_PVC_EXPECTATIONS, type VmiDeps } from './deps.ts';
import type { Observed, SyncError } from './sync.ts';

/** What a label value may be: at most 63 characters, alphanumeric at both ends, `-_.` inside. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * The PVCs that may be the VMI's backend storage (labelled `persistent-state-for=<vmi>`, or the
 * legacy name): one labelled LIST. A VMI name is not always a valid label value (names may have
 * 253 characters, label values 63), and a selector with it is refused as a bad request: then
 * the namespace's claims are listed and `backendPvcFor` picks, as KubeVirt's cache lookup does.
 */
export async function listBackendPvcs(deps: VmiDeps, namespace: string, vmiName: string, rv: string | undefined): Promise<V1PersistentVolumeClaim[]> {
  const selectable = vmiName.length <= 63 && LABEL_VALUE.test(vmiName);
  return (await deps.kube.list(PVCS, namespace, { ...(selectable ? { labelSelector: `${BACKEND_PVC_LABEL}=${vmiName}` } : {}), resourceVersion: rv })).items;
}

export type BackendResult = { kind: 'ready'; pvc?: V1PersistentVolumeClaim } | { kind: 'wait'; seconds: number } | { kind: 'error'; error: SyncError };

/**
 * Backend storage before the launcher pod (reference-vm-vmi-depth §2): a VMI with a persistent
 * TPM or EFI gets its `persistent-state-for-<vmi>-` PVC, created once (an expectation, like the
 * pod's, holds a second pass off until a read shows it), and the pod waits until it is ready.
 */
export async function ensureBackendStorage(key: string, o: Observed, deps: VmiDeps, rv: string | undefined): Promise<BackendResult> {
  const { vmi } = o;
  if (!backendStorageNeeded(vmi)) return deleteLeftoverBackendPvc(vmi, deps, rv);
  let pvc = o.backendPvc;
  // Listed at most once a pass: the create's choice of class and the readiness check share it.
  let classes: StorageClass[] | undefined;
  const gate = await expectationsGate(
    {
      key,
      scopes: [BACKEND_PVC_EXPECTATIONS],
      what: 'backend-storage PVC',
      lower: async (seen, [record]) => {
        if (seen && record && record.add > 0) await deps.expectations.creationObserved(BACKEND_PVC_EXPECTATIONS, key);
        return seen !== undefined || deps.expectations.satisfied(BACKEND_PVC_EXPECTATIONS, key, deps.now());
      },
    },
    pvc,
    deps,
  );
  if (gate.kind === 'wait') return { kind: 'wait', seconds: gate.seconds };
  if (!pvc) {
    const now = deps.now();
    const config = await deps.clusterConfig();
    const [classList, profiles] = await Promise.all([deps.kube.list(STORAGE_CLASSES, undefined), deps.kube.list(STORAGE_PROFILES, undefined)]);
    classes = classList.items;
    const choice = backendClassAndMode(config.vmStateStorageClass, classes, profiles.items);
    if ('error' in choice) return { kind: 'error', error: { reason: 'FailedBackendStorageCreate', message: choice.error, requeue: true } };
    if (!(await deps.expectations.tryExpectCreations(BACKEND_PVC_EXPECTATIONS, key, 1, now))) {
      return { kind: 'error', error: { reason: 'FailedBackendStorageCreate', message: 'another worker is creating the backend-storage PVC', requeue: true } };
    }
    try {
      pvc = await deps.kube.create(PVCS, renderBackendPvc(vmi, choice.className, choice.accessMode));
    } catch (err) {
      await deps.expectations.creationObserved(BACKEND_PVC_EXPECTATIONS, key);
      return { kind: 'error', error: { reason: 'FailedBackendStorageCreate', message: errorText(err), requeue: true } };
    }
  }
  if (pvc.status?.phase !== 'Bound') classes ??= (await deps.kube.list(STORAGE_CLASSES, undefined)).items;
  const readiness = backendPvcReadiness(pvc, classes ?? []);
  if (!readiness.ready) {
    return readiness.error
      ? { kind: 'error', error: { reason: 'FailedBackendStorageProbe', message: readiness.error, requeue: true } }
      : { kind: 'error', error: { reason: 'BackendStorageNotReady', message: 'PVC pending', requeue: false } };
  }
  return { kind: 'ready', pvc };
}

/**
 * A VMI that needs no backend storage but has a PVC left for it (a VM whose persistent TPM or EFI
 * was switched off) loses it before its launcher pod, as KubeVirt's sync does. One labelled LIST
 * for each launcher pod about to be created.
 */
async function deleteLeftoverBackendPvc(vmi: VirtualMachineInstance, deps: VmiDeps, rv: string | undefined): Promise<BackendResult> {
  const namespace = vmi.metadata?.namespace ?? '';
  const name = vmi.metadata?.name ?? '';
  // An informer-fresh read, as KubeVirt's PVC informer answers it (a VMI's view may carry it): a
  // claim left behind is the rare case, and one this read misses stays until the next launcher pod.
  const leftover = backendPvcFor(name, await listBackendPvcs(deps, namespace, name, rv));
  if (!leftover) return { kind: 'ready' };
  try {
    await deps.kube.delete(PVCS, namespace, leftover.metadata?.name ?? '');
  } catch (err) {
    if (!(err instanceof NotFoundError)) return { kind: 'error', error: { reason: 'Failed deleting backend storage', message: errorText(err), requeue: true } };
  }
  return { kind: 'ready' };
}
