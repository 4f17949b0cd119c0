/**
 * virt-handler's side of volume hotplug, as a pure step (reference-vm-vmi-depth §3.2 "Phases set
 * by virt-handler"): once the VMI controller has written a ready attachment pod's UID for a
 * volume (`hotplugVolume.attachPodUID`), the volume is mounted into the launcher (`MountedToPod`),
 * then attached to the domain (`Ready`, with a disk target); a volume gone from the spec is
 * detached and unmounted (`UnMountedFromPod`) so that the controller can let its pod go.
 * Entries without `hotplugVolume` (the launcher's own volumes, backend storage) are left alone.
 * The caller says which attachment pods are ready on the handler's node (`mountFromPod` finds
 * the volume only there).
 */
import type { Vmi } from './objects.ts';

/**
 * A test hook with no KubeVirt counterpart: a VMI annotated with it fails its memory dumps, with
 * the annotation's value as the failure reason (virt-handler's dump fails when, for instance, the
 * claim is too small). Without it every dump completes.
 */
export const FAIL_MEMORY_DUMP_ANNOTATION = 'sandbox.virt-reconciler.io/fail-memory-dump';

interface VolumeStatus {
  name: string;
  target?: string;
  phase?: string;
  reason?: string;
  message?: string;
  hotplugVolume?: { attachPodName?: string; attachPodUID?: string };
  [field: string]: unknown;
}

type HotplugVmi = Vmi & {
  spec?: { utilityVolumes?: { name: string }[] };
  status?: { volumeStatus?: VolumeStatus[] };
};

/** Phases from which a volume still in the spec is mounted (KubeVirt's `canUpdateToMounted`). */
const MOUNTABLE = new Set(['Bound', 'Pending', 'AttachedToNode']);
/** Phases from which a volume gone from the spec is unmounted (`canUpdateToUnmounted`). */
const UNMOUNTABLE = new Set(['Ready', 'MountedToPod', 'AttachedToNode', 'MemoryDumpCompleted', 'MemoryDumpFailed']);

/** The next disk target on the SCSI bus hotplugged disks use: `sda`, `sdb`, … not yet taken. */
function nextTarget(taken: ReadonlySet<string>): string {
  for (let i = 0; i < 26; i++) {
    const t = `sd${String.fromCharCode(97 + i)}`;
    if (!taken.has(t)) return t;
  }
  return 'sdz';
}

/**
 * The volume statuses after one handler step (each volume moves at most one phase), or undefined
 * when nothing moves. A utility volume is never attached to the domain: it stops at `MountedToPod`.
 */
export function nextHotplugVolumeStatus(vmi: HotplugVmi, nowIso = new Date().toISOString(), attachmentReady: (podUid: string) => boolean = () => true, domainExists = true): VolumeStatus[] | undefined {
  const current = vmi.status?.volumeStatus ?? [];
  const spec = new Set((vmi.spec?.volumes ?? []).map((v) => v.name));
  const utility = new Set((vmi.spec?.utilityVolumes ?? []).map((u) => u.name));
  const taken = new Set(current.map((s) => s.target ?? '').filter((t) => t !== ''));
  let changed = false;
  const next = current.map((s) => {
    if (!s.hotplugVolume) return s;
    const phase = s.phase ?? '';
    const wanted = spec.has(s.name) || utility.has(s.name);
    // The mount source is the attachment pod's volume: that pod must be ready on this node.
    if (wanted && MOUNTABLE.has(phase) && s.hotplugVolume.attachPodUID && attachmentReady(s.hotplugVolume.attachPodUID)) {
      changed = true;
      return { ...s, phase: 'MountedToPod', reason: 'VolumeMountedToPod', message: `Volume ${s.name} has been mounted in virt-launcher pod` };
    }
    // A memory-dump volume is not attached as a disk: the domain's memory is dumped into it.
    const dump = (vmi.spec?.volumes ?? []).find((v) => v.name === s.name)?.['memoryDump'] !== undefined;
    if (dump && wanted && phase === 'MountedToPod' && domainExists) {
      changed = true;
      return { ...s, phase: 'MemoryDumpInProgress', reason: 'MemoryDumpVolumeInProgress', message: `Memory dump Volume ${s.name} is in progress`, memoryDumpVolume: { ...(s['memoryDumpVolume'] as object), claimName: s.name, startTimestamp: nowIso } };
    }
    const failure = vmi.metadata?.annotations?.[FAIL_MEMORY_DUMP_ANNOTATION];
    if (dump && wanted && phase === 'MemoryDumpInProgress' && failure !== undefined) {
      changed = true;
      // virt-handler's failed dump: the phase and an end time, the reason left as it was.
      return { ...s, phase: 'MemoryDumpFailed', message: `Memory dump to pvc ${s.name} failed: ${failure}`, memoryDumpVolume: { ...(s['memoryDumpVolume'] as object), endTimestamp: nowIso } };
    }
    if (dump && wanted && phase === 'MemoryDumpInProgress') {
      changed = true;
      const stamp = nowIso.replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
      const fileName = `${vmi.metadata?.name ?? ''}-${s.name}-${stamp}.memory.dump`;
      return { ...s, phase: 'MemoryDumpCompleted', reason: 'MemoryDumpVolumeCompleted', message: `Memory dump Volume ${s.name} has completed successfully`, memoryDumpVolume: { ...(s['memoryDumpVolume'] as object), endTimestamp: nowIso, targetFileName: fileName } };
    }
    // Attached to the domain once there is one (a VMI still starting waits at MountedToPod).
    if (wanted && phase === 'MountedToPod' && spec.has(s.name) && domainExists) {
      changed = true;
      const target = nextTarget(taken);
      taken.add(target);
      return { ...s, target, phase: 'Ready', reason: 'VolumeReady', message: `Successfully attach hotplugged volume ${s.name} to VM` };
    }
    if (!wanted && UNMOUNTABLE.has(phase)) {
      changed = true;
      return { ...s, target: '', phase: 'UnMountedFromPod', reason: 'VolumeUnMountedFromPod', message: `Volume ${s.name} has been unmounted from virt-launcher pod` };
    }
    return s;
  });
  return changed ? next : undefined;
}
