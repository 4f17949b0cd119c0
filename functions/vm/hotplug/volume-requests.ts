/**
 * `status.volumeRequests` (reference-vm-vmi-depth §3.3, KubeVirt's `handleVolumeRequests` and
 * `ApplyVolumeRequestOnVMISpec`): each add/remove request applied to the VM template (and, for a
 * running VMI, to its spec, which is what the VMI addvolume/removevolume subresources do), and the
 * trimming of the requests the template already reflects. Pure.
 */
import type { Disk, VirtualMachineInstance, VirtualMachineInstanceSpec, VirtualMachineVolumeRequest, Volume } from '../../../shared/api/index.ts';

/** The request's volume as a hotpluggable VMI volume (a PVC or a DataVolume source). */
function requestVolume(name: string, source: NonNullable<VirtualMachineVolumeRequest['addVolumeOptions']>['volumeSource']): Volume {
  if (source.dataVolume) return { name, dataVolume: { ...source.dataVolume, hotpluggable: true } };
  return { name, persistentVolumeClaim: { ...source.persistentVolumeClaim!, hotpluggable: true } } as Volume;
}

/** One request applied to a VMI spec (a copy): an add appends the volume and disk if the name is absent; a remove drops both. */
export function applyVolumeRequest(spec: VirtualMachineInstanceSpec, request: VirtualMachineVolumeRequest): VirtualMachineInstanceSpec {
  const out = structuredClone(spec);
  const volumes = out.volumes ?? [];
  const disks = out.domain.devices.disks ?? [];
  if (request.addVolumeOptions) {
    const { name, disk, volumeSource } = request.addVolumeOptions;
    if (!volumes.some((v) => v.name === name)) out.volumes = [...volumes, requestVolume(name, volumeSource)];
    if (!disks.some((d) => d.name === name)) out.domain.devices.disks = [...disks, { ...structuredClone(disk), name } as Disk];
  } else if (request.removeVolumeOptions) {
    const { name } = request.removeVolumeOptions;
    if (volumes.some((v) => v.name === name)) out.volumes = volumes.filter((v) => v.name !== name);
    if (disks.some((d) => d.name === name)) out.domain.devices.disks = disks.filter((d) => d.name !== name);
  }
  return out;
}

/** Every request applied in order. */
export function applyVolumeRequests(spec: VirtualMachineInstanceSpec, requests: readonly VirtualMachineVolumeRequest[]): VirtualMachineInstanceSpec {
  return requests.reduce(applyVolumeRequest, spec);
}

/**
 * The requests that still need the running VMI: an add whose volume the VMI lacks, a remove whose
 * volume it has. None for a missing or deleting VMI.
 */
export function vmiVolumeRequests(vmi: VirtualMachineInstance | undefined, requests: readonly VirtualMachineVolumeRequest[]): VirtualMachineVolumeRequest[] {
  if (!vmi || vmi.metadata?.deletionTimestamp) return [];
  const names = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
  return requests.filter((r) => (r.addVolumeOptions ? !names.has(r.addVolumeOptions.name) : r.removeVolumeOptions ? names.has(r.removeVolumeOptions.name) : false));
}

/** Trimming in `updateStatus`: an add is done once the template has its volume and disk, a remove once it has neither. */
export function trimVolumeRequests(spec: VirtualMachineInstanceSpec | undefined, requests: readonly VirtualMachineVolumeRequest[]): VirtualMachineVolumeRequest[] {
  const volumes = new Set((spec?.volumes ?? []).map((v) => v.name));
  const disks = new Set((spec?.domain.devices.disks ?? []).map((d) => d.name));
  return requests.filter((r) => {
    if (r.addVolumeOptions) return !(volumes.has(r.addVolumeOptions.name) && disks.has(r.addVolumeOptions.name));
    if (r.removeVolumeOptions) return volumes.has(r.removeVolumeOptions.name) || disks.has(r.removeVolumeOptions.name);
    return true;
  });
}
