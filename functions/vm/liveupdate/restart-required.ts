/**
 * KubeVirt's `syncRestartRequired` (reference-vm-vmi-depth §5): does the VM template differ from
 * the spec its VMI was started from in a way no live update covers? Both specs come expanded (the
 * instance type and preference applied, §1.7). Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Disk, VirtualMachineInstance, VirtualMachineInstanceSpec, Volume } from '../../../shared/api/index.ts';
import { networkRestartRequired } from '../network/restart-required.ts';

export const RESTART_REQUIRED_MESSAGE = 'a non-live-updatable field was changed in the template spec';

export interface RestartInput {
  /** The spec the running VMI was started from (its start revision), expanded. */
  readonly started: VirtualMachineInstanceSpec;
  /** The VM template spec now, expanded. */
  readonly current: VirtualMachineInstanceSpec;
  readonly vmi: VirtualMachineInstance;
  /** The rollout strategy is LiveUpdate. */
  readonly liveUpdate: boolean;
  /** `spec.updateVolumesStrategy: Migration`: claim changes migrate instead. */
  readonly volumesMigrate: boolean;
}

const hotpluggable = (v: Volume) => v.persistentVolumeClaim?.hotpluggable === true || v.dataVolume?.hotpluggable === true || v.memoryDump?.hotpluggable === true;
const claimVolume = (v: Volume) => v.persistentVolumeClaim !== undefined || v.dataVolume !== undefined;

/** True when a restart is needed. Never mutates its input. */
export function restartRequired(input: RestartInput): boolean {
  const last = structuredClone(input.started);
  const now = structuredClone(input.current);
  ignoreHotplugVolumes(last, now, input.volumesMigrate);
  if (input.liveUpdate) {
    if (last.domain.cpu && now.domain.cpu) last.domain.cpu.sockets = now.domain.cpu.sockets;
    if (now.domain.memory?.guest !== undefined) last.domain.memory = { ...last.domain.memory, guest: now.domain.memory.guest };
    copyField(last, now, 'nodeSelector');
    copyField(last, now, 'affinity');
    copyField(last, now, 'tolerations');
  }
  // Interfaces and networks the network synchroniser can hot-plug or unplug (network/) are
  // taken as they are now; any other change of them stays in the comparison.
  if (!networkRestartRequired(input.current, input.vmi)) {
    if (now.domain.devices.interfaces === undefined) delete last.domain.devices.interfaces;
    else last.domain.devices.interfaces = now.domain.devices.interfaces;
    if (now.networks === undefined) delete last.networks;
    else last.networks = now.networks;
  }
  const vmiUuid = input.vmi.spec.domain.firmware?.uuid;
  if (vmiUuid !== undefined && vmiUuid === now.domain.firmware?.uuid && last.domain.firmware) last.domain.firmware.uuid = vmiUuid;
  return !isDeepStrictEqual(last, now);
}

function copyField(last: VirtualMachineInstanceSpec, now: VirtualMachineInstanceSpec, field: 'nodeSelector' | 'affinity' | 'tolerations'): void {
  if (now[field] === undefined) delete last[field];
  else (last as unknown as Record<string, unknown>)[field] = now[field];
}

/**
 * Adding, removing or changing a hotpluggable volume and its disk needs no restart (§3.3), nor
 * does a claim change under `updateVolumesStrategy: Migration`; removing a CD-ROM disk does.
 */
function ignoreHotplugVolumes(last: VirtualMachineInstanceSpec, now: VirtualMachineInstanceSpec, volumesMigrate: boolean): void {
  const exempt = new Set<string>();
  for (const v of [...(last.volumes ?? []), ...(now.volumes ?? [])]) if (hotpluggable(v) || (volumesMigrate && claimVolume(v))) exempt.add(v.name);
  const nowDisks = new Map((now.domain.devices.disks ?? []).map((d) => [d.name, d]));
  // A CD-ROM the template dropped stays in the comparison: ejecting it needs a restart.
  const keep = (d: Disk) => d.cdrom !== undefined && !nowDisks.has(d.name);
  const strip = (spec: VirtualMachineInstanceSpec, isLast: boolean) => {
    const volumes = (spec.volumes ?? []).filter((v) => !exempt.has(v.name) || (isLast && keepVolume(v.name)));
    const disks = (spec.domain.devices.disks ?? []).filter((d) => !exempt.has(d.name) || (isLast && keep(d)));
    // An emptied list and a missing one are the same spec.
    if (volumes.length > 0) spec.volumes = volumes;
    else delete spec.volumes;
    if (disks.length > 0) spec.domain.devices.disks = disks;
    else delete spec.domain.devices.disks;
  };
  const lastDisks = new Map((last.domain.devices.disks ?? []).map((d) => [d.name, d]));
  const keepVolume = (name: string) => {
    const d = lastDisks.get(name);
    return d !== undefined && keep(d);
  };
  strip(last, true);
  strip(now, false);
}
