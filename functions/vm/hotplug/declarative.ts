/**
 * Declarative volume hotplug (reference-vm-vmi-depth §3.3, KubeVirt's
 * `handleDeclarativeVolumeHotplug`): the hotpluggable volumes of a running VM's template are
 * brought into its VMI's spec, and those gone from the template (or changed) taken out, with
 * their disks. Pure: the new VMI volume and disk lists, or undefined when nothing changes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Disk, VirtualMachine, VirtualMachineInstance, Volume } from '../../../shared/api/index.ts';
import { gateEnabled, type ClusterConfig } from '../../../shared/config/cluster-config.ts';

/** A PVC or DataVolume volume marked `hotpluggable: true`. */
function hotpluggable(v: Volume): boolean {
  return v.persistentVolumeClaim?.hotpluggable === true || v.dataVolume?.hotpluggable === true;
}

/**
 * Only with the legacy `HotplugVolumes` gate off and `DeclarativeHotplugVolumes` on, for a
 * Running VMI, and not while volumes are updated by migration.
 */
export function declarativeHotplugApplies(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, config: ClusterConfig): vmi is VirtualMachineInstance {
  if (gateEnabled(config, 'HotplugVolumes') || !gateEnabled(config, 'DeclarativeHotplugVolumes')) return false;
  if (!vmi || vmi.status?.phase !== 'Running') return false;
  return vm.spec.updateVolumesStrategy !== 'Migration';
}

export interface VmiVolumeChange {
  readonly volumes: Volume[];
  readonly disks: Disk[];
}

/** The VMI's volumes and disks after declarative hotplug, or undefined when they stay. */
export function declarativeVolumeChange(vm: VirtualMachine, vmi: VirtualMachineInstance): VmiVolumeChange | undefined {
  const template = vm.spec.template.spec;
  const tVolumes = new Map((template?.volumes ?? []).map((v) => [v.name, v]));
  const tDisks = new Map((template?.domain.devices.disks ?? []).map((d) => [d.name, d]));
  const vmiVolumes = vmi.spec.volumes ?? [];
  const vmiDisks = vmi.spec.domain.devices.disks ?? [];

  // A hotpluggable VMI volume missing from the template, or different there, is unplugged.
  const volumes = vmiVolumes.filter((v) => !hotpluggable(v) || isDeepStrictEqual(tVolumes.get(v.name), v));
  // An unplug still in progress (its status entry) blocks a re-add.
  const busy = new Set([...vmiVolumes.map((v) => v.name), ...(vmi.status?.volumeStatus ?? []).map((s) => s.name)]);
  const added = [...tVolumes.values()].filter((v) => hotpluggable(v) && !busy.has(v.name));
  volumes.push(...added.map((v) => structuredClone(v)));

  const surviving = new Set(volumes.map((v) => v.name));
  const disks = vmiDisks.filter((d) => {
    if (surviving.has(d.name)) return true;
    const td = tDisks.get(d.name);
    if (!td) return false;
    // A CD-ROM eject (the volume gone, the drive kept) keeps the disk.
    return !(tVolumes.has(d.name) && !(d.cdrom !== undefined && td.cdrom !== undefined));
  });
  for (const v of added) {
    const td = tDisks.get(v.name);
    if (td && !disks.some((d) => d.name === v.name)) disks.push(structuredClone(td));
  }
  if (isDeepStrictEqual(volumes, vmiVolumes) && isDeepStrictEqual(disks, vmiDisks)) return undefined;
  return { volumes, disks };
}
