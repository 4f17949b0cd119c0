/**
 * `status.volumeStatus` as KubeVirt's VMI controller writes it at the hand-off and on every pass
 * while the VMI is `Scheduled` or `Running` (reference-vm-vmi-depth §3.2, reference-node-side
 * §1.6; KubeVirt `pkg/virt-controller/watch/vmi/storage.go` `updateVolumeStatus`,
 * `processPVCInfo`, `processHotplugVolumeStatus`): an entry per spec volume and utility volume
 * (virt-handler's fields in it kept), `persistentVolumeClaimInfo` from the claim of every
 * PVC / DataVolume / memory-dump volume — what virt-handler's start checks, host-disk sizing and
 * migratability read; hotplug entries with their attachment pod and a phase the controller owns
 * until the pod is there (`Pending`/`Bound` from the claim, then `AttachedToNode`), virt-handler's
 * phases (`MountedToPod`, `Ready`, `UnMountedFromPod`) kept, removed volumes kept as `Detaching`
 * while an attachment pod still holds them; the backend-storage entry kept. Pure.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { PersistentVolumeClaimInfo, VirtualMachineInstance, VolumeStatus } from '../../../shared/api/index.ts';
import { BACKEND_VOLUME_STATUS_NAME } from '../../../shared/storage/backend-storage.ts';
import { currentAndOldPods, podsOfLauncher } from './attachment-pods.ts';
import { hotplugVolumes } from './volumes.ts';

const PREALLOCATION_ANNOTATION = 'cdi.kubevirt.io/storage.preallocation';

export interface VolumeStatusInput {
  readonly vmi: VirtualMachineInstance;
  readonly launcherPod: V1Pod;
  readonly attachmentPods: readonly V1Pod[];
  /** The volumes' claims by name (absent: not found, or not read). */
  readonly pvcs: ReadonlyMap<string, V1PersistentVolumeClaim>;
}

/**
 * CDI's filesystem overhead as KubeVirt reads it from the CDIConfig of a CDI installed with its
 * defaults: none for a Block claim, the global 5.5 % for a filesystem one (docs/vmi-controller.md).
 */
const FILESYSTEM_OVERHEAD = '0.055';

type Phased = Pick<VolumeStatus, 'phase' | 'reason' | 'message'>;

/** The phase a hotplug volume without an attachment pod takes from its claim. */
function phaseFromClaim(claimName: string, pvc: V1PersistentVolumeClaim | undefined): Phased {
  if (!pvc) return { phase: 'Pending', reason: 'FailedPvcNotFound', message: `PVC ${claimName} not found` };
  switch (pvc.status?.phase) {
    case 'Pending':
      return { phase: 'Pending', reason: 'PVCNotReady', message: 'PVC is in phase ClaimPending' };
    case 'Bound':
      return { phase: 'Bound', reason: 'PVCNotReady', message: 'PVC is in phase Bound' };
    default:
      return { phase: 'Pending', reason: 'PVCNotReady', message: 'PVC is in phase Lost' };
  }
}

/** `persistentVolumeClaimInfo` from the claim (`processPVCInfo`). */
export function claimInfo(pvc: V1PersistentVolumeClaim): PersistentVolumeClaimInfo {
  const mode = pvc.spec?.volumeMode;
  return {
    claimName: pvc.metadata?.name ?? '',
    ...(pvc.spec?.accessModes ? { accessModes: [...pvc.spec.accessModes] as PersistentVolumeClaimInfo['accessModes'] } : {}),
    ...(mode ? { volumeMode: mode as PersistentVolumeClaimInfo['volumeMode'] } : {}),
    ...(pvc.status?.capacity ? { capacity: { ...pvc.status.capacity } } : {}),
    ...(pvc.spec?.resources?.requests ? { requests: { ...pvc.spec.resources.requests } } : {}),
    ...(pvc.metadata?.annotations?.[PREALLOCATION_ANNOTATION] === 'true' ? { preallocated: true } : {}),
    filesystemOverhead: mode === 'Block' ? '0' : FILESYSTEM_OVERHEAD,
  };
}

/** `attachPodUID`: the pod's UID once its one container is ready, else none. */
function readyUid(pod: V1Pod): string | undefined {
  const statuses = pod.status?.containerStatuses ?? [];
  return statuses.length === 1 && statuses[0]!.ready ? pod.metadata?.uid : undefined;
}

function withPhase(entry: VolumeStatus, p: Phased): VolumeStatus {
  return { ...entry, ...p };
}

/** The claim a volume reads (`PVCNameFromVirtVolume`): a PVC's, a DataVolume's, a memory dump's. */
function claimOfVolume(v: NonNullable<VirtualMachineInstance['spec']['volumes']>[number]): string | undefined {
  return v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name ?? v.memoryDump?.claimName;
}

/** The VMI's `status.volumeStatus` brought up to date, sorted by name. */
export function vmiVolumeStatus(input: VolumeStatusInput): VolumeStatus[] {
  const { vmi, launcherPod, pvcs } = input;
  const attachmentPods = podsOfLauncher(input.attachmentPods, launcherPod);
  const existing = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s]));
  const volumes = hotplugVolumes(vmi, launcherPod);
  // The current pod is judged against every hotplug volume, ready or not.
  const { current } = currentAndOldPods(attachmentPods, volumes);
  const out: VolumeStatus[] = [];
  const written = new Set<string>();

  const backend = existing.get(BACKEND_VOLUME_STATUS_NAME);
  if (backend) {
    out.push(backend);
    written.add(backend.name);
  }
  const specNames = new Set([...(vmi.spec.volumes ?? []).map((v) => v.name), ...(vmi.spec.utilityVolumes ?? []).map((u) => u.name)]);
  // The launcher pod's own volumes: an entry each (virt-handler's target kept), with the claim's info.
  for (const v of vmi.spec.volumes ?? []) {
    if (volumes.some((h) => h.name === v.name)) continue;
    const entry: VolumeStatus = { ...existing.get(v.name), name: v.name, target: existing.get(v.name)?.target ?? '' };
    if (v.memoryDump) entry.memoryDumpVolume = { ...entry.memoryDumpVolume, claimName: v.name };
    const claim = claimOfVolume(v);
    const pvc = claim === undefined ? undefined : pvcs.get(claim);
    if (pvc) entry.persistentVolumeClaimInfo = claimInfo(pvc);
    out.push(entry);
    written.add(v.name);
  }
  for (const v of volumes) {
    const pvc = pvcs.get(v.claimName);
    const before = existing.get(v.name);
    let entry: VolumeStatus = { ...before, name: v.name, target: before?.target ?? '', hotplugVolume: { ...before?.hotplugVolume } };
    if (!v.utility && vmi.spec.volumes?.find((s) => s.name === v.name)?.memoryDump) entry.memoryDumpVolume = { ...before?.memoryDumpVolume, claimName: v.name };
    if (pvc) entry.persistentVolumeClaimInfo = claimInfo(pvc);
    if (!current) {
      if (entry.phase !== 'Ready') {
        const { attachPodUID: _uid, ...rest } = entry.hotplugVolume ?? {};
        entry = withPhase({ ...entry, hotplugVolume: rest }, phaseFromClaim(v.claimName, pvc));
      }
    } else {
      const podName = current.metadata?.name ?? '';
      const uid = readyUid(current);
      entry.hotplugVolume = { ...entry.hotplugVolume, attachPodName: podName };
      if (uid) entry.hotplugVolume.attachPodUID = uid;
      else delete entry.hotplugVolume.attachPodUID;
      const phase = entry.phase ?? '';
      if (phase === '' || phase === 'Bound' || phase === 'Pending') {
        entry = withPhase(entry, { phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: `Created hotplug attachment pod ${podName}, for volume ${v.name}` });
      } else if (phase === 'Detaching') {
        entry = withPhase(entry, phaseFromClaim(v.claimName, pvc));
      }
    }
    // A utility volume is mounted as a directory: a Block claim cannot serve it.
    if (v.utility && pvc?.spec?.volumeMode === 'Block') {
      const { persistentVolumeClaimInfo: _info, ...rest } = entry;
      entry = withPhase(rest as VolumeStatus, { phase: 'Pending', reason: 'PVCNotReady', message: `Utility volume PVC ${v.claimName} must be filesystem mode, not block mode` });
    }
    out.push(entry);
    written.add(v.name);
  }
  // Removed volumes: kept while an attachment pod still holds them.
  for (const s of vmi.status?.volumeStatus ?? []) {
    if (written.has(s.name) || specNames.has(s.name) || s.hotplugVolume === undefined) continue;
    const holder = attachmentPods.find((p) => (p.spec?.volumes ?? []).some((pv) => pv.name === s.name && pv.persistentVolumeClaim !== undefined));
    if (!holder) continue;
    let entry: VolumeStatus = { ...s, hotplugVolume: { attachPodName: holder.metadata?.name ?? '', ...(holder.metadata?.uid ? { attachPodUID: holder.metadata.uid } : {}) } };
    if (s.phase !== 'Ready' && s.phase !== 'MountedToPod') {
      entry = { ...entry, phase: 'Detaching' };
      if (holder.metadata?.deletionTimestamp) {
        entry = { ...entry, reason: 'SuccessfulDelete', message: `Deleted hotplug attachment pod ${holder.metadata?.name ?? ''}, for volume ${s.name}` };
      }
    }
    out.push(entry);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The Normal events KubeVirt records with these entries: each new `SuccessfulCreate`/`SuccessfulDelete` message. */
export function volumeStatusEvents(before: readonly VolumeStatus[] | undefined, after: readonly VolumeStatus[] | undefined): { reason: string; message: string }[] {
  const old = new Map((before ?? []).map((s) => [s.name, s]));
  const out: { reason: string; message: string }[] = [];
  for (const s of after ?? []) {
    if (s.reason !== 'SuccessfulCreate' && s.reason !== 'SuccessfulDelete') continue;
    const o = old.get(s.name);
    if (o?.reason === s.reason && o.message === s.message) continue;
    out.push({ reason: s.reason, message: s.message ?? '' });
  }
  return out;
}
