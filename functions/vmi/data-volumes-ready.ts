/**
 * The VMI's `DataVolumesReady` condition, aggregated from the DataVolumes behind its volumes on
 * every pass (KubeVirt's VMI controller, `aggregateDataVolumesConditions` in its status update):
 * True with `AllDVsReady` when every one's CDI `Ready` condition is True; otherwise
 * `NotAllDVsReady`, False if any is False, else Unknown. With no DataVolume the condition is left
 * as it is (never removed). The VM controller mirrors it onto the VM, where a stopped VM keeps it.
 * Pure: the caller reads the DataVolumes.
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance, VirtualMachineInstanceStatus } from '../../shared/api/index.ts';
import { VMI_CONDITION } from '../../shared/api/well-known.ts';
import { setCondition } from './conditions.ts';

/**
 * The DataVolumes a VMI's volumes stand on (KubeVirt's `ListDataVolumesFromVolumes`): each
 * `dataVolume` volume's, and the owner of each `persistentVolumeClaim` volume's claim when a
 * DataVolume controls it — known only for the claims this pass read (`claims`).
 */
export function dataVolumeNamesOf(vmi: VirtualMachineInstance, claims: ReadonlyMap<string, V1PersistentVolumeClaim>): string[] {
  const names: string[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (v.dataVolume?.name) names.push(v.dataVolume.name);
    else if (v.persistentVolumeClaim?.claimName) {
      const owner = claims.get(v.persistentVolumeClaim.claimName)?.metadata?.ownerReferences?.find((o) => o.controller === true);
      if (owner?.kind === 'DataVolume') names.push(owner.name);
    }
  }
  return [...new Set(names)];
}

/** Sets `DataVolumesReady` on `status` from `dataVolumes` (none: left untouched). */
export function aggregateDataVolumesReady(status: VirtualMachineInstanceStatus, dataVolumes: readonly DataVolume[]): void {
  if (dataVolumes.length === 0) return;
  let state: 'True' | 'False' | 'Unknown' = 'True';
  for (const dv of dataVolumes) {
    const ready = (dv.status?.conditions ?? []).find((c) => c.type === 'Ready')?.status ?? 'Unknown';
    if (ready === 'False') state = 'False';
    else if (ready !== 'True' && state === 'True') state = 'Unknown';
  }
  // Go's zero times: KubeVirt sets neither on this condition.
  setCondition(status, {
    type: VMI_CONDITION.DataVolumesReady,
    status: state,
    reason: state === 'True' ? 'AllDVsReady' : 'NotAllDVsReady',
    message: state === 'True' ? "All of the VMI's DVs are bound and ready" : "Not all of the VMI's DVs are ready",
    lastProbeTime: null,
    lastTransitionTime: null,
  });
}
