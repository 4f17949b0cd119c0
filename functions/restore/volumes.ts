/**
 * The restore's volumes (reference §2.4): the wanted `status.restores` (the content's volume
 * backups minus MemoryDump volumes, existing entries kept), then per entry its PVC — created from
 * the VolumeSnapshot when missing, an InPlace claim not yet restored let go (its DataVolume
 * marked pre-populated first), a Pending one waited for unless its class binds on first
 * consumer, a Bound one done.
 */
import { isDeepStrictEqual } from 'node:util';
import { DATA_VOLUMES, PVCS, STORAGE_CLASSES, VOLUME_SNAPSHOTS } from '../../shared/api/resources.ts';
import type { VirtualMachineRestore, VirtualMachineSnapshotContent, VolumeRestore } from '../../shared/api/snapshot.ts';
import { AlreadyExistsError } from '../../shared/kube/errors.ts';
import type { RestoreDeps } from './deps.ts';
import { LAST_RESTORE_UID_ANNOTATION, PRE_POPULATED_ANNOTATION, RESTORE_NAME_ANNOTATION, restoreAnnotationValue, restoreVolumeName, type NamingInput } from './names.ts';
import { renderRestorePvc } from './restore-pvc.ts';
import type { RestoreVm } from './restored-vm.ts';

/**
 * A restore step failed with KubeVirt's text (the error path reports it). `wait`: what is
 * missing arrives as an event the relay maps to this restore (the snapshot becoming ready, the
 * target VM changing), so the pass ends there instead of retrying with backoff.
 */
export class RestoreStepError extends Error {
  readonly wait: boolean;
  constructor(message: string, wait = false) {
    super(message);
    this.wait = wait;
  }
}

export const namingOf = (r: VirtualMachineRestore): NamingInput => ({
  restoreUid: r.metadata?.uid ?? '',
  targetName: r.spec?.target?.name ?? '',
  policy: r.spec?.volumeRestorePolicy,
  overrides: r.spec?.volumeRestoreOverrides,
});

/** The wanted restore entries; throws when a backup has no VolumeSnapshot name. */
export function wantedRestores(r: VirtualMachineRestore, content: VirtualMachineSnapshotContent): VolumeRestore[] {
  const memoryDumps = new Set((content.spec?.source?.virtualMachine?.spec?.template?.spec?.volumes ?? []).filter((v) => v.memoryDump).map((v) => v.name));
  const existing = new Map((r.status?.restores ?? []).map((e) => [e.volumeName, e]));
  const out: VolumeRestore[] = [];
  for (const b of content.spec?.volumeBackups ?? []) {
    if (memoryDumps.has(b.volumeName)) continue;
    const kept = existing.get(b.volumeName);
    if (kept) {
      out.push(kept);
      continue;
    }
    if (!b.volumeSnapshotName) throw new RestoreStepError(`VolumeSnapshotName missing ${b.volumeName}`);
    out.push({ volumeName: b.volumeName, persistentVolumeClaim: restoreVolumeName(namingOf(r), b.volumeName, b.persistentVolumeClaim.metadata?.name ?? ''), volumeSnapshotName: b.volumeSnapshotName });
  }
  return out;
}

/** One pass over the volumes: the entries (possibly changed) and whether anything is still to happen. */
export async function reconcileVolumeRestores(r: VirtualMachineRestore, content: VirtualMachineSnapshotContent, target: RestoreVm | undefined, deps: RestoreDeps): Promise<{ restores: VolumeRestore[]; updated: boolean }> {
  const ns = r.metadata?.namespace ?? '';
  const restores = wantedRestores(r, content);
  let updated = !isDeepStrictEqual(restores, r.status?.restores ?? []);
  const vmMeta = content.spec?.source?.virtualMachine?.metadata;
  for (const [i, entry] of restores.entries()) {
    const pvc = await deps.kube.get(PVCS, ns, entry.persistentVolumeClaim);
    if (!pvc) {
      const backup = (content.spec?.volumeBackups ?? []).find((b) => b.volumeName === entry.volumeName)!;
      const vs = await deps.kube.get(VOLUME_SNAPSHOTS, ns, entry.volumeSnapshotName);
      if (!vs) throw new RestoreStepError(`missing volumeSnapshot ${entry.volumeSnapshotName}`);
      const body = renderRestorePvc({
        restore: r,
        entry,
        backup,
        vs,
        sourceVm: { name: vmMeta?.name ?? '', namespace: vmMeta?.namespace ?? ns, uid: vmMeta?.uid ?? '' },
        target: target ? { name: target.metadata?.name ?? '', uid: target.metadata?.uid ?? '' } : undefined,
      });
      try {
        await deps.kube.create(PVCS, body);
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      updated = true;
      continue;
    }
    if (r.spec?.volumeRestorePolicy === 'InPlace' && pvc.metadata?.annotations?.[LAST_RESTORE_UID_ANNOTATION] !== restoreAnnotationValue(r)) {
      const dvOwner = pvc.metadata?.ownerReferences?.find((o) => o.controller && o.kind === 'DataVolume')?.name;
      if (dvOwner && !entry.dataVolumeName) {
        restores[i] = { ...entry, dataVolumeName: dvOwner };
        updated = true;
        continue;
      }
      if (entry.dataVolumeName) {
        const dv = await deps.kube.get(DATA_VOLUMES, ns, entry.dataVolumeName);
        if (dv) {
          const annotations = { ...(dv.metadata?.annotations ?? {}), [RESTORE_NAME_ANNOTATION]: r.metadata?.name ?? '', [PRE_POPULATED_ANNOTATION]: entry.dataVolumeName };
          await deps.kube.patch(DATA_VOLUMES, ns, entry.dataVolumeName, { type: 'json', ops: [{ op: dv.metadata?.annotations ? 'replace' : 'add', path: '/metadata/annotations', value: annotations }] });
        }
      }
      await deps.kube.delete(PVCS, ns, entry.persistentVolumeClaim);
      updated = true;
      continue;
    }
    const phase = pvc.status?.phase;
    if (phase === 'Pending') {
      const sc = pvc.spec?.storageClassName;
      let wffc = false;
      if (sc) {
        const cls = await deps.kube.get(STORAGE_CLASSES, undefined, sc);
        if (!cls) throw new RestoreStepError(`StorageClass ${sc} does not exist`);
        wffc = cls.volumeBindingMode === 'WaitForFirstConsumer';
      }
      if (!wffc) updated = true;
    } else if (phase !== 'Bound') {
      throw new RestoreStepError(`PVC ${ns}/${entry.persistentVolumeClaim} in status "${phase ?? ''}"`);
    }
  }
  return { restores, updated };
}
