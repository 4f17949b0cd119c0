/**
 * SCSI persistent reservation (a LUN disk with `reservation: true`): the launcher needs the
 * `pr-helper` device, and two launchers holding a reservation on the same claim must not share a
 * node — each gets a `pr.kubevirt.io/<claim UID>` label and a required pod anti-affinity to any
 * pod with that label (reference §b.1, §b.2).
 */
import type { V1PodAffinityTerm } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import type { PvcInfo } from './render-volumes.ts';

/** The pod label prefix of a reserved claim (followed by the claim's UID). */
export const PERSISTENT_RESERVATION_LABEL_PREFIX = 'pr.kubevirt.io/';
/** The device plugin resource of the persistent-reservation helper. */
export const PR_HELPER_RESOURCE = 'devices.kubevirt.io/pr-helper';

/** Any LUN disk asks for a reservation (`HasVMIPersistentReservation`). */
export function hasPersistentReservation(vmi: VirtualMachineInstance): boolean {
  return (vmi.spec.domain.devices.disks ?? []).some((d) => d.lun?.reservation === true);
}

/**
 * One label per reserved claim whose UID is known: the claim of the disk's PVC, DataVolume or
 * memory-dump volume. A claim the caller did not read gets none (as a claim missing from
 * KubeVirt's cache).
 */
export function reservationLabels(vmi: VirtualMachineInstance, pvcs: Readonly<Record<string, PvcInfo>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const volumes = new Map((vmi.spec.volumes ?? []).map((v) => [v.name, v]));
  for (const d of vmi.spec.domain.devices.disks ?? []) {
    if (d.lun?.reservation !== true) continue;
    const v = volumes.get(d.name);
    const claim = v?.dataVolume?.name ?? v?.persistentVolumeClaim?.claimName ?? v?.memoryDump?.claimName;
    const uid = claim === undefined ? undefined : pvcs?.[claim]?.uid;
    if (uid) out[`${PERSISTENT_RESERVATION_LABEL_PREFIX}${uid}`] = '';
  }
  return out;
}

/**
 * The anti-affinity terms for those labels. KubeVirt appends them in Go map order, which varies
 * from one render to the next; ours are in label order.
 */
export function reservationAntiAffinity(labels: Readonly<Record<string, string>>): V1PodAffinityTerm[] {
  return Object.keys(labels).sort().map((key) => ({ labelSelector: { matchExpressions: [{ key, operator: 'Exists' }] }, topologyKey: 'kubernetes.io/hostname' }));
}
