/**
 * The restore and backend storage (reference §2.7 step 4, §2.3 step 12): a VM with a persistent
 * TPM or EFI (or CBT) keeps its state in the claim labelled `persistent-state-for=<vm>`. When the
 * snapshot holds that volume, the restored claim takes the label for the target, and — restored
 * under its own name — the original claim gives it up for `restore.kubevirt.io/cleanup-backend-pvc`,
 * so that the VMI finds exactly one backend claim and the old one is deleted once the restore is
 * done.
 */
import { PVCS } from '../../shared/api/resources.ts';
import type { VirtualMachineRestore, VirtualMachineSnapshotContent, VolumeRestore } from '../../shared/api/snapshot.ts';
import { getName } from '../../shared/storage/get-name.ts';
import { BACKEND_LABEL, backendVolumeName, needsBackendStorage, type VmLike } from '../../shared/storage/vm-volumes.ts';
import type { RestoreDeps } from './deps.ts';

export const CLEANUP_BACKEND_LABEL = 'restore.kubevirt.io/cleanup-backend-pvc';

/** The label value naming the backend claims to delete for `target`: `GetName("persistent-state-for", target, 63)`. */
export const cleanupBackendValue = (target: string) => getName(BACKEND_LABEL, target, 63);

/** `labels` with `set` applied (undefined values removed); undefined when nothing changes. */
export function relabelled(labels: Record<string, string> | undefined, set: Record<string, string | undefined>): Record<string, string> | undefined {
  const out = { ...(labels ?? {}) };
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  const same = Object.keys(out).length === Object.keys(labels ?? {}).length && Object.entries(out).every(([k, v]) => labels?.[k] === v);
  return same ? undefined : out;
}

async function relabel(deps: RestoreDeps, ns: string, claim: string, set: Record<string, string | undefined>): Promise<void> {
  const pvc = await deps.kube.get(PVCS, ns, claim);
  const labels = pvc && relabelled(pvc.metadata?.labels, set);
  if (pvc && labels) await deps.kube.update(PVCS, { ...pvc, metadata: { ...pvc.metadata, labels } });
}

/** §2.7 step 4, before the VM is written: nothing unless the snapshot VM needs backend storage and the snapshot holds its volume. */
export async function handOverBackend(r: VirtualMachineRestore, content: VirtualMachineSnapshotContent, restores: readonly VolumeRestore[], deps: RestoreDeps): Promise<void> {
  const snapshotVm = content.spec?.source?.virtualMachine ?? {};
  const sourceName = snapshotVm.metadata?.name ?? '';
  if (!needsBackendStorage(snapshotVm as VmLike)) return;
  const volume = backendVolumeName(sourceName);
  const entry = restores.find((e) => e.volumeName === volume);
  const backup = content.spec?.volumeBackups?.find((b) => b.volumeName === volume);
  if (!entry || !backup) return;
  const ns = r.metadata?.namespace ?? '';
  const target = r.spec?.target?.name ?? '';
  const original = backup.persistentVolumeClaim.metadata?.name ?? '';
  if (target === sourceName && original !== entry.persistentVolumeClaim) {
    await relabel(deps, ns, original, { [BACKEND_LABEL]: undefined, [CLEANUP_BACKEND_LABEL]: cleanupBackendValue(target) });
  }
  await relabel(deps, ns, entry.persistentVolumeClaim, { [BACKEND_LABEL]: target });
}

/** §2.3 step 12: the backend claims a restore into `target` left for deletion. */
export async function cleanupBackend(ns: string, target: VmLike & { metadata?: { name?: string } }, deps: RestoreDeps): Promise<void> {
  if (!needsBackendStorage(target)) return;
  const name = target.metadata?.name ?? '';
  const left = await deps.kube.list(PVCS, ns, { labelSelector: `${CLEANUP_BACKEND_LABEL}=${cleanupBackendValue(name)}` });
  for (const pvc of left.items) await deps.kube.delete(PVCS, ns, pvc.metadata?.name ?? '');
}
