/**
 * Which hotplug volumes (shared/storage/hotplug-volumes.ts, KubeVirt's `GetHotplugVolumes`) are
 * ready to attach (reference-vm-vmi-depth §3.1, `VolumeReadyToAttachToNode`). Pure: the caller
 * reads the claims and DataVolumes.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { DataVolume } from '../../../shared/api/index.ts';
import type { HotplugVolume } from '../../../shared/storage/hotplug-volumes.ts';
import type { SyncError } from '../sync.ts';

export { hotplugVolumes, type HotplugVolume } from '../../../shared/storage/hotplug-volumes.ts';

/** The claims behind the hotplug volumes, as read this pass (absent: not found). */
export interface HotplugClaims {
  readonly pvcs: ReadonlyMap<string, V1PersistentVolumeClaim>;
  readonly dataVolumes: ReadonlyMap<string, DataVolume>;
}

export interface ReadyVolumes {
  /** Ready to attach, in VMI order. */
  readonly ready: readonly HotplugVolume[];
  /** Waiting for their first consumer (a WFFC DataVolume): each needs a trigger pod. */
  readonly wffc: readonly HotplugVolume[];
  /** KubeVirt's `PVCNotReady` sync error: a claim is missing, nothing is attached this pass. */
  readonly error?: SyncError;
}

/** True when the claim is owned by a DataVolume (its controller reference). */
function dataVolumeOwned(pvc: V1PersistentVolumeClaim): boolean {
  return (pvc.metadata?.ownerReferences ?? []).some((r) => r.kind === 'DataVolume' && r.controller === true);
}

/**
 * Which hotplug volumes can be attached now. A utility volume on a block claim is skipped (only
 * filesystem utility volumes are attached); a missing claim stops the whole step with
 * `PVCNotReady`; a claim not owned by a DataVolume is ready, a DataVolume-owned one once the
 * DataVolume is `Succeeded` or `PendingPopulation`, and waits for a trigger pod while it is
 * `WaitForFirstConsumer`.
 */
export function readyVolumes(volumes: readonly HotplugVolume[], claims: HotplugClaims): ReadyVolumes {
  const ready: HotplugVolume[] = [];
  const wffc: HotplugVolume[] = [];
  for (const v of volumes) {
    const pvc = claims.pvcs.get(v.claimName);
    if (v.utility) {
      if (!pvc) return { ready, wffc, error: { reason: 'PVCNotReady', message: `utility volume ${v.name} references PVC ${v.claimName} which does not exist`, requeue: true } };
      if (pvc.spec?.volumeMode === 'Block') continue;
    }
    if (!pvc) return { ready, wffc, error: { reason: 'PVCNotReady', message: `Error determining volume status didn't find PVC ${v.claimName}`, requeue: true } };
    if (!dataVolumeOwned(pvc)) {
      ready.push(v);
      continue;
    }
    const dv = claims.dataVolumes.get(v.claimName);
    const phase = dv?.status?.phase;
    if (phase === 'Succeeded' || phase === 'PendingPopulation') ready.push(v);
    else if (phase === 'WaitForFirstConsumer') wffc.push(v);
  }
  return { ready, wffc };
}
