/**
 * The hotplug attachment pods of a running VMI (reference-vm-vmi-depth §3.1, KubeVirt's
 * `handleHotplugVolumes` and `cleanupAttachmentPods`): one `hp-volume-` pod holds every ready
 * hotplug volume; when the set changes a new pod is created for the whole new set and the old
 * ones are collected once virt-handler no longer uses their volumes. Pods are never edited.
 * Pure: from the VMI, its launcher pod, the attachment pods and the claims, what to create and
 * what to delete this pass.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { EPHEMERAL_PROVISIONING_ANNOTATION } from '../../../shared/api/well-known.ts';
import { isPodFinal, isPodReady, isTempPod, podsControlledBy } from '../../../shared/predicates/pods.ts';
import type { SyncError } from '../sync.ts';
import { hotplugVolumes, readyVolumes, type HotplugClaims, type HotplugVolume } from './volumes.ts';

/** Volume phases in which virt-handler still uses a removed volume from its attachment pod. */
const IN_USE_PHASES = new Set(['Ready', 'MountedToPod']);

export interface AttachmentInput {
  readonly vmi: VirtualMachineInstance;
  /** The VMI's current launcher pod. */
  readonly launcherPod: V1Pod;
  /** Attachment and trigger pods (only those the launcher pod controls count). */
  readonly attachmentPods: readonly V1Pod[];
  readonly claims: HotplugClaims;
}

export interface AttachmentPlan {
  /** Create one attachment pod for these volumes (the whole ready set). */
  readonly create?: readonly HotplugVolume[];
  /** WFFC volumes that need a trigger pod so that their claims bind. */
  readonly triggers: readonly HotplugVolume[];
  /** Old attachment pods to delete (grace 0). */
  readonly delete: readonly V1Pod[];
  readonly error?: SyncError;
}

const NOTHING: AttachmentPlan = { triggers: [], delete: [] };

/** A hotplug trigger pod (only there so that a WFFC claim binds), never a current pod. */
function isTriggerPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[EPHEMERAL_PROVISIONING_ANNOTATION] === 'true';
}

/**
 * `podVolumesMatchesReadyVolumes`: the pod's claims are exactly these volumes. KubeVirt counts
 * all pod volumes minus two (the `hotplug-disks` emptyDir and the service-account token volume
 * the API server injects); counting the claim-backed volumes is the same on a server that injects
 * the token, and stays right on one that does not (automount disabled for the service account).
 */
export function podMatchesVolumes(pod: V1Pod, volumes: readonly { name: string }[]): boolean {
  if (isTriggerPod(pod)) return false;
  const claims = (pod.spec?.volumes ?? []).filter((v) => v.persistentVolumeClaim !== undefined);
  const names = new Set(volumes.map((v) => v.name));
  return claims.length === volumes.length && claims.every((v) => names.has(v.name));
}

function createdMs(pod: V1Pod): number {
  const t = pod.metadata?.creationTimestamp;
  return t ? new Date(t).getTime() : 0;
}

/** The current pod (non-deleting, matching `volumes`) and the others, newest first. */
export function currentAndOldPods(pods: readonly V1Pod[], volumes: readonly { name: string }[]): { current?: V1Pod; old: V1Pod[] } {
  let current: V1Pod | undefined;
  const old: V1Pod[] = [];
  for (const p of pods) {
    if (!current && p.metadata?.deletionTimestamp === undefined && podMatchesVolumes(p, volumes)) current = p;
    else old.push(p);
  }
  old.sort((a, b) => createdMs(b) - createdMs(a));
  return current ? { current, old } : { old };
}

/** Is the launcher pod one the hotplug step works with: not temporary, ready, not being deleted? */
export function launcherReadyForHotplug(pod: V1Pod | undefined): pod is V1Pod {
  return pod !== undefined && !isTempPod(pod) && isPodReady(pod) && pod.metadata?.deletionTimestamp === undefined;
}

/** Volumes removed from the spec that virt-handler still uses (status `Ready` or `MountedToPod`). */
function removedInUse(vmi: VirtualMachineInstance): Set<string> {
  const hotpluggable = new Set([
    ...(vmi.spec.volumes ?? []).filter((v) => v.persistentVolumeClaim?.hotpluggable || v.dataVolume?.hotpluggable || v.memoryDump !== undefined).map((v) => v.name),
    ...(vmi.spec.utilityVolumes ?? []).map((u) => u.name),
  ]);
  return new Set(
    (vmi.status?.volumeStatus ?? [])
      .filter((s) => s.hotplugVolume !== undefined && !hotpluggable.has(s.name) && IN_USE_PHASES.has(s.phase ?? ''))
      .map((s) => s.name),
  );
}

function podVolumeNames(pod: V1Pod): string[] {
  return (pod.spec?.volumes ?? []).filter((v) => v.persistentVolumeClaim !== undefined).map((v) => v.name);
}

/** The attachment pods of this launcher pod (after a migration the old launcher's are not its). */
export function podsOfLauncher(pods: readonly V1Pod[], launcherPod: V1Pod): V1Pod[] {
  return podsControlledBy(pods, launcherPod);
}

/** What the hotplug step does this pass (nothing unless the launcher pod is ready for it). */
export function planAttachmentPods(input: AttachmentInput): AttachmentPlan {
  const { vmi, launcherPod } = input;
  const attachmentPods = podsOfLauncher(input.attachmentPods, launcherPod);
  if (!launcherReadyForHotplug(launcherPod)) return NOTHING;
  const volumes = hotplugVolumes(vmi, launcherPod);
  // needsHandleHotplug: with no hotplug volume and no attachment pod there is nothing to do.
  if (volumes.length === 0 && attachmentPods.length === 0) return NOTHING;

  const r = readyVolumes(volumes, input.claims);
  if (r.error) return { ...NOTHING, error: r.error };
  const { current, old } = currentAndOldPods(attachmentPods, r.ready);
  const oldPending = old.some((p) => !['Running', 'Succeeded', 'Failed'].includes(p.status?.phase ?? ''));
  const create = current === undefined && !oldPending && r.ready.length > 0 ? r.ready : undefined;

  // Cleanup: a running old pod stays as the fallback while the new one is not running yet, and
  // any pod holding a removed volume virt-handler still uses stays until it lets go.
  const inUse = removedInUse(vmi);
  const waiting = new Set(r.wffc.map((v) => v.name));
  const specHotplug = new Set(volumes.map((v) => v.name));
  const deletions: V1Pod[] = [];
  let fallbackFound = false;
  for (const p of old) {
    const names = podVolumeNames(p);
    if (
      !fallbackFound &&
      p.status?.phase === 'Running' &&
      p.metadata?.deletionTimestamp === undefined &&
      r.ready.length > 0 &&
      (current === undefined || current.status?.phase !== 'Running') &&
      names.some((n) => specHotplug.has(n) || inUse.has(n))
    ) {
      fallbackFound = true;
      continue;
    }
    if (names.some((n) => inUse.has(n))) continue;
    // Ours: a trigger pod stays while its claim still waits for its first consumer (KubeVirt's
    // cleanup may delete it before the scheduler has bound the claim, and create it again).
    if (isTriggerPod(p) && names.some((n) => waiting.has(n))) continue;
    if (p.metadata?.deletionTimestamp === undefined) deletions.push(p);
  }
  // A trigger pod is only needed while no trigger pod for the claim exists yet.
  const triggered = new Set(attachmentPods.filter(isTriggerPod).flatMap(podVolumeNames));
  const triggers = r.wffc.filter((v) => !triggered.has(v.name));
  return { ...(create ? { create } : {}), triggers, delete: deletions };
}

/**
 * Attachment pods to delete outside the hotplug step: every one of a final VMI's current launcher
 * pod, and those of any launcher pod that has ended (Succeeded/Failed).
 */
export function orphanedAttachmentPods(vmi: VirtualMachineInstance, launcherPod: V1Pod | undefined, ownedPods: readonly V1Pod[], attachmentPods: readonly V1Pod[]): V1Pod[] {
  const final = vmi.status?.phase === 'Succeeded' || vmi.status?.phase === 'Failed';
  const ended = new Set(ownedPods.filter(isPodFinal).map((p) => p.metadata?.uid));
  if (final && launcherPod?.metadata?.uid) ended.add(launcherPod.metadata.uid);
  return attachmentPods.filter((p) => p.metadata?.deletionTimestamp === undefined && (p.metadata?.ownerReferences ?? []).some((r) => r.controller === true && ended.has(r.uid)));
}
