/**
 * Which claims the VMI and migration controllers read, and what the template service learns from them. KubeVirt
 * reads them from its PVC informer; a stateless pass reads only the ones that matter for what it
 * is about to do: before the launcher pod, the claims the pod mounts (their volume mode decides
 * `volumeDevices` or `volumeMounts`, their access modes the shared filesystem paths); from the
 * hand-off on, every claim a volume status entry describes (`persistentVolumeClaimInfo`).
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import type { PvcInfo } from '../template/render-volumes.ts';
import { hotplugVolumeNames } from '../template/render-volumes.ts';
import { pvcInfo } from '../template/cluster-facts.ts';

/** Claims the launcher pod mounts: PVC, DataVolume and ephemeral volumes that are not hotplugged. */
export function launcherClaimNames(vmi: VirtualMachineInstance): string[] {
  const hotplug = hotplugVolumeNames(vmi);
  const out: string[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (hotplug.has(v.name)) continue;
    const claim = v.persistentVolumeClaim?.claimName ?? v.ephemeral?.persistentVolumeClaim?.claimName ?? v.dataVolume?.name;
    if (claim) out.push(claim);
  }
  return [...new Set(out)];
}

/** Claims `status.volumeStatus` describes: PVC, DataVolume, memory-dump and utility volumes. */
export function statusClaimNames(vmi: VirtualMachineInstance): string[] {
  const out: string[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name ?? v.memoryDump?.claimName;
    if (claim) out.push(claim);
  }
  for (const u of vmi.spec.utilityVolumes ?? []) if (u.claimName) out.push(u.claimName);
  return [...new Set(out)];
}

/** What the template service needs to know of each claim the launcher pod mounts (`pvcInfo`), by claim name. */
export function renderClaimInfo(claims: ReadonlyMap<string, V1PersistentVolumeClaim>): Record<string, PvcInfo> {
  return Object.fromEntries([...claims].map(([name, pvc]) => [name, pvcInfo(pvc)]));
}
