/**
 * The VMI reconcile's hotplug step (reference-vm-vmi-depth §3.1): read the attachment pods and
 * the hotplug claims, then carry out {@link planAttachmentPods} — create the one attachment pod
 * for the ready set (and WFFC trigger pods), delete old ones — and the deletions that do not
 * wait for a ready launcher pod (a final VMI's, an ended launcher pod's).
 */
import { createHash } from 'node:crypto';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { DATA_VOLUMES, PODS, PVCS } from '../../../shared/api/resources.ts';
import { APP_LABEL, HOTPLUG_DISK_APP } from '../../../shared/api/well-known.ts';
import { errorText, InvalidInputError } from '../../../shared/errors.ts';
import { NotFoundError } from '../../../shared/kube/errors.ts';
import { claimCreations } from '../../../shared/reconcile/expectations-gate.ts';
import { attachmentVolume, renderAttachmentPod, renderHotplugTriggerPod, type AttachmentVolume } from '../../../shared/template/render-attachment-pod.ts';
import type { VmiDeps } from '../deps.ts';
import type { SyncError } from '../sync.ts';
import { currentAndOldPods, orphanedAttachmentPods, planAttachmentPods, podsOfLauncher } from './attachment-pods.ts';
import { hotplugVolumes, readyVolumes, type HotplugVolume } from './volumes.ts';

/** Attachment pods this controller created and no read has shown yet, per VMI key and volume set. */
export const ATTACHMENT_POD_EXPECTATIONS = 'vmi-attachment-pods';

/** What the observe step read for hotplug (only for a VMI that has, or had, hotplug volumes). */
export interface HotplugObserved {
  /** Pods controlled by one of the VMI's pods and labelled `kubevirt.io: hotplug-disk`. */
  readonly attachmentPods: readonly V1Pod[];
  readonly pvcs: ReadonlyMap<string, V1PersistentVolumeClaim>;
  readonly dataVolumes: ReadonlyMap<string, DataVolume>;
}

/**
 * Does this VMI need the hotplug reads? Only when its launcher pod leaves volumes out or its
 * status names hotplugged volumes: a VMI that never had one costs no extra read.
 */
export function needsHotplugRead(vmi: VirtualMachineInstance, launcherPod: V1Pod | undefined): launcherPod is V1Pod {
  if (!launcherPod) return false;
  if ((vmi.status?.volumeStatus ?? []).some((s) => s.hotplugVolume !== undefined)) return true;
  return hotplugVolumes(vmi, launcherPod).length > 0;
}

/** Reads the attachment pods of `ownedPods` and the claims (and DataVolumes) of the hotplug volumes. */
export async function observeHotplug(vmi: VirtualMachineInstance, launcherPod: V1Pod, ownedPods: readonly V1Pod[], deps: VmiDeps, rv: string | undefined, known: ReadonlyMap<string, V1PersistentVolumeClaim> = new Map()): Promise<HotplugObserved> {
  const namespace = vmi.metadata?.namespace ?? '';
  const owners = new Set(ownedPods.map((p) => p.metadata?.uid).filter((u) => u !== undefined));
  const list = await deps.kube.list(PODS, namespace, { labelSelector: `${APP_LABEL}=${HOTPLUG_DISK_APP}`, resourceVersion: rv });
  const attachmentPods = list.items.filter((p) => (p.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.kind === 'Pod' && owners.has(r.uid)));
  const pvcs = new Map<string, V1PersistentVolumeClaim>();
  const dataVolumes = new Map<string, DataVolume>();
  await Promise.all(hotplugVolumes(vmi, launcherPod).map(async (v) => {
    // Claims the pass already read (the volume status reads every volume's) are not read again.
    const pvc = known.get(v.claimName) ?? (await deps.kube.get(PVCS, namespace, v.claimName, { resourceVersion: rv }));
    if (pvc) pvcs.set(v.claimName, pvc);
    const dvOwned = (pvc?.metadata?.ownerReferences ?? []).some((r) => r.kind === 'DataVolume');
    if (v.dataVolume || dvOwned) {
      const dv = await deps.kube.get(DATA_VOLUMES, namespace, v.claimName, { resourceVersion: rv });
      if (dv) dataVolumes.set(v.claimName, dv);
    }
  }));
  return { attachmentPods, pvcs, dataVolumes };
}

export interface HotplugStepResult {
  /** The attachment pods as this pass leaves them (a created one included). */
  readonly attachmentPods: readonly V1Pod[];
  readonly error?: SyncError;
  /** Another worker's creation of the same pod is not visible yet: look again after this long. */
  readonly requeueSeconds?: number;
}

type Event = (type: 'Normal' | 'Warning', reason: string, message: string) => Promise<void>;

/** The expectation key of one attachment pod: the VMI key, its launcher pod and the volume set. */
function setKey(key: string, launcherPod: V1Pod, volumes: readonly HotplugVolume[]): string {
  const names = volumes.map((v) => v.name).sort().join('\n');
  return `${key}#${createHash('sha256').update(`${launcherPod.metadata?.uid ?? ''}\n${names}`).digest('hex').slice(0, 16)}`;
}

/** Runs the hotplug step; `launcherReady` is false when the sync decision left no ready launcher pod to work with. */
export async function syncHotplug(key: string, vmi: VirtualMachineInstance, launcherPod: V1Pod, ownedPods: readonly V1Pod[], h: HotplugObserved, deps: VmiDeps, event: Event): Promise<HotplugStepResult> {
  let pods = [...h.attachmentPods];
  // Not waiting for a ready launcher: a final VMI's attachment pods, an ended launcher pod's.
  for (const p of orphanedAttachmentPods(vmi, launcherPod, ownedPods, pods)) {
    try {
      await deleteNow(p, deps);
    } catch (err) {
      if (vmi.status?.phase === 'Succeeded' || vmi.status?.phase === 'Failed') return { attachmentPods: pods, error: { reason: 'FailedHotplugSync', message: errorText(err), requeue: true } };
      deps.log.warn('could not delete the attachment pod of an ended launcher pod', { pod: p.metadata?.name, error: errorText(err) });
    }
  }
  if (vmi.status?.phase === 'Succeeded' || vmi.status?.phase === 'Failed' || vmi.metadata?.deletionTimestamp) return { attachmentPods: pods };

  const plan = planAttachmentPods({ vmi, launcherPod, attachmentPods: pods, claims: h });
  if (plan.error) return { attachmentPods: pods, error: plan.error };
  const config = await deps.clusterConfig();
  const attachment = (v: HotplugVolume): AttachmentVolume => attachmentVolume(v, h.pvcs.get(v.claimName), vmi.status?.volumeStatus?.find((s) => s.name === v.name)?.phase);

  let requeueSeconds: number | undefined;
  if (plan.create) {
    const ek = setKey(key, launcherPod, plan.create);
    let pod: V1Pod | undefined;
    try {
      pod = renderAttachmentPod(plan.create.map(attachment), launcherPod, vmi, config);
    } catch (err) {
      // KubeVirt drops template errors here (a VMI without an SELinux context): no pod, no error.
      if (!(err instanceof InvalidInputError)) throw err;
    }
    if (pod) {
      const claim = await claimCreations(deps, ATTACHMENT_POD_EXPECTATIONS, ek, 1, { whileLive: 5, afterTakeover: 1 });
      if (claim.kind === 'claimed') {
        try {
          const created = await deps.kube.create(PODS, pod);
          pods = [...pods, created];
          await event('Normal', 'SuccessfulCreate', `Created attachment pod ${created.metadata?.name ?? ''}`);
        } catch (err) {
          await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, ek);
          await event('Warning', 'FailedCreate', `Error creating attachment pod: ${errorText(err)}`);
          return { attachmentPods: pods, error: { reason: 'FailedCreate', message: `Error creating attachment pod: ${errorText(err)}`, requeue: true } };
        }
      } else {
        // Another pass is creating it, or its creator is long gone without the pod ever showing
        // (the record was taken over: the next pass claims).
        requeueSeconds = claim.seconds;
      }
    }
  } else {
    // The pod for this set is visible: a creation expectation recorded for it is met.
    const ready = readyVolumes(hotplugVolumes(vmi, launcherPod), h);
    const { current } = currentAndOldPods(podsOfLauncher(pods, launcherPod), ready.ready);
    if (current) {
      const ek = setKey(key, launcherPod, ready.ready);
      if (await deps.expectations.get(ATTACHMENT_POD_EXPECTATIONS, ek)) await deps.expectations.delete(ATTACHMENT_POD_EXPECTATIONS, ek);
    }
  }

  for (const v of plan.triggers) {
    try {
      const created = await deps.kube.create(PODS, renderHotplugTriggerPod(attachment(v), launcherPod, vmi, config));
      pods = [...pods, created];
      await event('Normal', 'SuccessfulCreate', `Created hotplug trigger pod for volume ${v.name}`);
    } catch (err) {
      if (err instanceof InvalidInputError) continue;
      await event('Warning', 'FailedCreate', `Error creating hotplug population trigger pod for volume ${v.name}: ${errorText(err)}`);
      return { attachmentPods: pods, error: { reason: 'FailedCreate', message: errorText(err), requeue: true } };
    }
  }

  for (const p of plan.delete) {
    const name = p.metadata?.name ?? '';
    try {
      await deleteNow(p, deps);
      await event('Normal', 'SuccessfulDelete', `Deleted attachment pod ${name}`);
    } catch (err) {
      await event('Warning', 'FailedDelete', `Failed to delete attachment pod ${name}`);
      return { attachmentPods: pods, error: { reason: 'FailedDelete', message: `Error deleting attachment pod ${name}: ${errorText(err)}`, requeue: true } };
    }
  }
  return { attachmentPods: pods, ...(requeueSeconds !== undefined ? { requeueSeconds } : {}) };
}

/** Deletes with grace 0; a pod already gone is fine (a lagging read listed it). */
async function deleteNow(pod: V1Pod, deps: VmiDeps): Promise<void> {
  try {
    await deps.kube.delete(PODS, pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

