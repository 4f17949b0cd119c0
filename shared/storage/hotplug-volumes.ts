/**
 * Which of a VMI's volumes are hotplugged (reference-vm-vmi-depth §3.1, KubeVirt's
 * `GetHotplugVolumes` and `VMIHasHotplugVolumes`), pure. The VMI controller attaches them to its
 * launcher pod; the migration controller attaches the same set to a migration's target pod.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';

/** A hotplugged volume: a VMI volume (or utility volume) the launcher pod does not mount. */
export interface HotplugVolume {
  /** The VMI volume name. */
  readonly name: string;
  readonly claimName: string;
  /** Backed by a DataVolume of the claim's name (`dataVolume` volumes). */
  readonly dataVolume: boolean;
  /** A `spec.utilityVolumes` entry (a backup target, say), not a `spec.volumes` one. */
  readonly utility: boolean;
}

/**
 * `GetHotplugVolumes`: every PVC, DataVolume or MemoryDump volume of the VMI whose name is not a
 * volume of the launcher pod, whether or not it is marked `hotpluggable`, then each utility
 * volume the pod does not have.
 */
export function hotplugVolumes(vmi: VirtualMachineInstance, launcherPod: V1Pod): HotplugVolume[] {
  const inPod = new Set((launcherPod.spec?.volumes ?? []).map((v) => v.name));
  const out: HotplugVolume[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (inPod.has(v.name)) continue;
    const claimName = v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name ?? v.memoryDump?.claimName;
    if (claimName) out.push({ name: v.name, claimName, dataVolume: v.dataVolume !== undefined, utility: false });
  }
  for (const u of vmi.spec.utilityVolumes ?? []) {
    if (!inPod.has(u.name)) out.push({ name: u.name, claimName: u.claimName, dataVolume: false, utility: true });
  }
  return out;
}

/**
 * `VMIHasHotplugVolumes`: a volume status entry carries `hotplugVolume`, or a PVC / DataVolume
 * volume is marked `hotpluggable`. The migration controller asks it without a pod at hand.
 */
export function vmiHasHotplugVolumes(vmi: VirtualMachineInstance): boolean {
  if ((vmi.status?.volumeStatus ?? []).some((s) => s.hotplugVolume !== undefined)) return true;
  return (vmi.spec.volumes ?? []).some((v) => v.dataVolume?.hotpluggable === true || v.persistentVolumeClaim?.hotpluggable === true);
}
