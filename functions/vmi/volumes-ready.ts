/**
 * Are the VMI's DataVolume / PVC volumes ready to attach (reference.md §a.3 step 4)?
 * Pure: the caller reads the PVCs and DataVolumes.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance } from '../../shared/api/index.ts';
import type { PvcInfo } from '../../shared/template/render-volumes.ts';
import { pvcInfo } from '../../shared/template/cluster-facts.ts';

export interface VolumeReadiness {
  readonly ready: boolean;
  /** Some DataVolume waits for its first consumer: render the temporary pod. */
  readonly wffc: boolean;
  /** A referenced PVC does not exist yet: `ns/name`. */
  readonly missingPvc?: string;
  /** A DataVolume failed its import. */
  readonly failedDataVolume?: string;
}

/** The claim names (PVC or DataVolume, which makes a PVC of the same name) a VMI's volumes use. */
export function claimNames(vmi: VirtualMachineInstance): { pvcs: string[]; dataVolumes: string[] } {
  const pvcs: string[] = [];
  const dataVolumes: string[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName && !v.persistentVolumeClaim.hotpluggable) pvcs.push(v.persistentVolumeClaim.claimName);
    if (v.dataVolume?.name && !v.dataVolume.hotpluggable) dataVolumes.push(v.dataVolume.name);
  }
  return { pvcs, dataVolumes };
}

/**
 * A PVC not owned by a DataVolume is ready; a DV-owned one is ready when the DV phase is
 * Succeeded or PendingPopulation; a DV in WaitForFirstConsumer counts as "wffc".
 */
export function volumesReady(
  vmi: VirtualMachineInstance,
  pvcs: ReadonlyMap<string, V1PersistentVolumeClaim>,
  dataVolumes: ReadonlyMap<string, DataVolume>,
): VolumeReadiness {
  const ns = vmi.metadata?.namespace ?? '';
  const { pvcs: pvcNames, dataVolumes: dvNames } = claimNames(vmi);
  let ready = true;
  let wffc = false;
  for (const name of [...pvcNames, ...dvNames]) {
    const dv = dataVolumes.get(name);
    if (dv?.status?.phase === 'Failed') return { ready: false, wffc, failedDataVolume: `${ns}/${name}` };
    const pvc = pvcs.get(name);
    if (!pvc) return { ready: false, wffc, missingPvc: `${ns}/${name}` };
    const ownedByDv = (pvc.metadata?.ownerReferences ?? []).some((r) => r.kind === 'DataVolume');
    if (!ownedByDv) continue;
    const phase = dv?.status?.phase;
    if (phase === 'Succeeded' || phase === 'PendingPopulation') continue;
    if (phase === 'WaitForFirstConsumer') {
      wffc = true;
      continue;
    }
    ready = false;
  }
  return { ready, wffc };
}
