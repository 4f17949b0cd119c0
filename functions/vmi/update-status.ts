/**
 * The VMI controller's status computation (reference.md §a.4), pure: from the original VMI and
 * what was observed (including a pod this pass just created), the VMI as it should now be.
 * `reconcile.ts` decides how to write the difference.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { BACKEND_VOLUME_STATUS_NAME } from '../../shared/storage/backend-storage.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceStatus } from '../../shared/api/index.ts';
import {
  COMPUTE_CONTAINER,
  LATEST_OBSERVED_API_VERSION_ANNOTATION,
  MEMORY_OVERHEAD_BYTES_ANNOTATION,
  MIGRATION_TRANSPORT_UNIX_ANNOTATION,
  NODE_NAME_LABEL,
  OUTDATED_LAUNCHER_IMAGE_LABEL,
  STORAGE_OBSERVED_API_VERSION_ANNOTATION,
  VMI_CONDITION,
  VMI_FINALIZER,
  VM_CONTROLLER_FINALIZER,
} from '../../shared/api/well-known.ts';
import { condition, findCondition, removeCondition, setCondition } from './conditions.ts';
import { aggregateDataVolumesReady } from './data-volumes-ready.ts';
import { imagePullProblem, isControlledBy, isPodDownOrGoingDown, isPodReady, isTempPod } from '../../shared/predicates/pods.ts';
import { FAILED_GUARANTEE_REASON, type Observed, type SyncError } from './sync.ts';
import { interfacesFromPod, sameInterfaces } from './network-status.ts';
import { vmiVolumeStatus } from './hotplug/volume-status.ts';
import { syncMigrationRequired } from './migration-required.ts';
import { cpuHotplugPending, memoryHotplugPending } from '../../shared/liveupdate/hotplug-conditions.ts';
import { markVolumesChange } from './volume-migration.ts';
import { isReceiver, podIsDown, receiverFailed, receiverWaiting } from './receiver.ts';
import { bytesAsBinaryQuantity } from '../../shared/api/quantity.ts';

const LEGACY_FINALIZER = 'foregroundDeleteVirtualMachine';
const OUTDATED_LAUNCHER_LABEL = OUTDATED_LAUNCHER_IMAGE_LABEL;
const MEMORY_HOTPLUG_OVERHEAD_RATIO_LABEL = 'kubevirt.io/memory-hotplug-overhead-ratio';

export interface StatusInput {
  readonly observed: Observed;
  readonly syncError: SyncError | undefined;
  /** ISO timestamp for conditions and phase transitions. */
  readonly now: string;
  /** The launcher image this controller renders (for the outdated-launcher label). */
  readonly launcherImage: string;
  /** Whether a VM owning this VMI still exists (only consulted for final VMIs without pods). */
  readonly ownerVmLive: boolean;
  /** `additionalGuestMemoryOverheadRatio` as configured, if set (labelled on a memory hotplug). */
  readonly memoryOverheadRatio?: number | undefined;
}

/** Phases in which virt-handler owns the VMI: the controller only patches a few fields then. */
export function isHandlerOwned(phase: string | undefined): boolean {
  return phase === 'Running' || phase === 'Scheduled';
}

/** The VMI as it should be after this pass. Never mutates its input. */
export function computeVmi(input: StatusInput): VirtualMachineInstance {
  const { observed, syncError, now } = input;
  const original = observed.vmi;
  const vmi = structuredClone(original);
  const meta = (vmi.metadata ??= {});
  const status: VirtualMachineInstanceStatus = (vmi.status ??= {});
  const pod = observed.pod;
  const vmiPodExists = pod !== undefined && !isTempPod(pod);
  const tempPodExists = pod !== undefined && isTempPod(pod);
  const receiver = isReceiver(original);

  if (meta.finalizers?.includes(LEGACY_FINALIZER)) {
    meta.finalizers = [...new Set(meta.finalizers.map((f) => (f === LEGACY_FINALIZER ? VMI_FINALIZER : f)))];
  }
  // The first write KubeVirt makes to a VMI records the API version it was observed at; we fold
  // it into the first status write instead of spending a write of its own.
  if (meta.annotations?.[LATEST_OBSERVED_API_VERSION_ANNOTATION] !== 'v1') {
    meta.annotations = { ...meta.annotations, [LATEST_OBSERVED_API_VERSION_ANNOTATION]: 'v1', [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: 'v1' };
  }

  const controlled = observed.pods.filter((p) => isControlledBy(p, original));
  if (controlled.length > 0 || status.activePods) {
    status.activePods = Object.fromEntries(controlled.map((p) => [p.metadata?.uid ?? '', p.spec?.nodeName ?? '']));
  }

  aggregateDataVolumesReady(status, observed.dataVolumes ?? []);
  if (observed.backendPvc) syncBackendVolumeStatus(status, observed.backendPvc);
  syncReadyCondition(status, pod, vmiPodExists, now);

  if (pod && vmiPodExists) {
    const image = pod.spec?.containers.find((c) => c.name === COMPUTE_CONTAINER)?.image;
    if (image) {
      status.launcherContainerImageVersion = image;
      if (image !== input.launcherImage) meta.labels = { ...meta.labels, [OUTDATED_LAUNCHER_LABEL]: '' };
      else if (meta.labels?.[OUTDATED_LAUNCHER_LABEL] !== undefined) meta.labels = withoutKey(meta.labels, OUTDATED_LAUNCHER_LABEL);
    }
    // As KubeVirt's VMI controller writes it: the annotation's bytes as a BinarySI quantity.
    const annotated = pod.metadata?.annotations?.[MEMORY_OVERHEAD_BYTES_ANNOTATION];
    const overhead = annotated === undefined ? undefined : bytesAsBinaryQuantity(annotated);
    if (overhead !== undefined) status.memory = { ...status.memory, memoryOverhead: overhead };
  }

  let phase = original.status?.phase ?? '';
  switch (phase) {
    case '':
    case 'Pending':
      if (vmiPodExists) phase = 'Scheduling';
      else if (meta.deletionTimestamp || observed.volumes.failedDataVolume) phase = 'Failed';
      else if (receiverWaiting(original)) phase = 'WaitingForSync';
      else {
        phase = 'Pending';
        if (observed.volumes.wffc && !findCondition(status, VMI_CONDITION.Provisioning)) setCondition(status, condition(VMI_CONDITION.Provisioning, 'True', '', '', now));
        if (tempPodExists && pod) {
          // The temporary pod's scheduling is the VMI's (a stale mirrored condition goes), and
          // it failing fails the VMI — only while a volume still waits for it (§4).
          mirrorPodScheduled(status, pod, now);
          if (observed.volumes.wffc && tempPodFailed(pod)) phase = 'Failed';
        }
        if (syncError?.reason === 'FailedPvcNotFound') {
          setCondition(status, condition(VMI_CONDITION.PodScheduled, 'False', 'Unschedulable', syncError.message, now));
        }
      }
      break;
    case 'Scheduling':
      removeCondition(status, VMI_CONDITION.Provisioning);
      if (pod && vmiPodExists) {
        if (pod.status?.qosClass) status.qosClass = pod.status.qosClass as NonNullable<VirtualMachineInstanceStatus['qosClass']>;
        mirrorPodScheduled(status, pod, now);
        if (isPodReady(pod) && !meta.deletionTimestamp && syncError?.reason !== FAILED_GUARANTEE_REASON) {
          // The hand-off: virt-handler on this node takes the VMI from here.
          phase = 'Scheduled';
          const node = pod.spec?.nodeName ?? '';
          meta.labels = { ...meta.labels, [NODE_NAME_LABEL]: node };
          status.nodeName = node;
          if (pod.metadata?.annotations?.[MIGRATION_TRANSPORT_UNIX_ANNOTATION] !== undefined) status.migrationTransport = 'Unix';
          syncInterfaces(vmi, status, pod);
        } else if (isPodDownOrGoingDown(pod)) {
          phase = receiver ? 'WaitingForSync' : 'Failed';
        }
      } else {
        phase = receiver ? 'WaitingForSync' : 'Failed';
      }
      break;
    case 'Scheduled':
    case 'Running':
      // A Scheduled receiver whose pod is gone or down, or whose migration failed, waits for the
      // next sync; its migration is recorded as failed and over.
      if (phase === 'Scheduled' && receiver && (!pod || !vmiPodExists || podIsDown(pod) || receiverFailed(original))) {
        phase = 'WaitingForSync';
        if (status.migrationState) status.migrationState = { ...status.migrationState, failed: true, completed: true, endTimestamp: now };
      } else if (!pod || !vmiPodExists) phase = 'Failed';
      else if (phase === 'Running' && !isPodDownOrGoingDown(pod)) {
        syncInterfaces(vmi, status, pod);
        markHotplug(vmi, input.memoryOverheadRatio, now);
        markVolumesChange(vmi, now);
        syncMigrationRequired(vmi, status, pod, now);
      }
      break;
    case 'Succeeded':
    case 'Failed':
      if (controlled.length === 0) {
        meta.finalizers = (meta.finalizers ?? []).filter((f) => f !== VMI_FINALIZER && (input.ownerVmLive || f !== VM_CONTROLLER_FINALIZER));
        if (meta.labels?.[OUTDATED_LAUNCHER_LABEL] !== undefined) meta.labels = withoutKey(meta.labels, OUTDATED_LAUNCHER_LABEL);
        delete status.launcherContainerImageVersion;
      }
      break;
    case 'WaitingForSync':
      // Deleted while waiting: no pod will report back; its finalizers go (the VM controller's
      // too when no VM owns it any more).
      if (meta.deletionTimestamp) meta.finalizers = (meta.finalizers ?? []).filter((f) => f !== VMI_FINALIZER && (input.ownerVmLive || f !== VM_CONTROLLER_FINALIZER));
      else if (pod && vmiPodExists && !receiverFailed(original) && !(receiver && podIsDown(pod))) phase = 'Scheduling';
      break;
    default:
      break;
  }
  status.phase = phase;
  // EvictionRequested mirrors the evacuation mark in every phase (KubeVirt's updateStatus): added
  // once True, removed with the mark.
  if (status.evacuationNodeName) {
    if (findCondition(status, VMI_CONDITION.EvictionRequested)?.status !== 'True') setCondition(status, condition(VMI_CONDITION.EvictionRequested, 'True', 'EvictionRequested', 'VMI is marked for eviction', now));
  } else {
    removeCondition(status, VMI_CONDITION.EvictionRequested);
  }
  // The volume status virt-handler starts from (claim info) and hotplug runs on: written at the
  // hand-off and kept current while Scheduled or Running.
  if ((phase === 'Scheduled' || phase === 'Running') && pod && vmiPodExists) {
    const pvcs = new Map([...(observed.claims ?? []), ...(observed.hotplug?.pvcs ?? [])]);
    const next = vmiVolumeStatus({ vmi, launcherPod: pod, attachmentPods: observed.hotplug?.attachmentPods ?? [], pvcs });
    if (!isDeepStrictEqual(next, status.volumeStatus ?? [])) status.volumeStatus = next;
  }

  if (!isHandlerOwned(original.status?.phase)) {
    syncSynchronizedCondition(status, syncError, pod, now);
    if (phase !== (original.status?.phase ?? '') && phase !== '') {
      status.phaseTransitionTimestamps = [...(status.phaseTransitionTimestamps ?? []), { phase, phaseTransitionTimestamp: now }];
    }
  }
  return vmi;
}

/**
 * A spec the VM controller raised (reference-vm-vmi-depth §5): `HotVCPUChange` / `HotMemoryChange`
 * True, without a reason, added only when absent; the workload updater migrates the VMI and the
 * target virt-handler applies the change and removes them.
 */
function markHotplug(vmi: VirtualMachineInstance, ratio: number | undefined, now: string): void {
  const status = vmi.status!;
  if (cpuHotplugPending(vmi) && !findCondition(status, VMI_CONDITION.VCPUChange)) setCondition(status, condition(VMI_CONDITION.VCPUChange, 'True', '', '', now));
  if (memoryHotplugPending(vmi) && !findCondition(status, VMI_CONDITION.MemoryChange)) {
    setCondition(status, condition(VMI_CONDITION.MemoryChange, 'True', '', '', now));
    if (ratio !== undefined) vmi.metadata = { ...vmi.metadata, labels: { ...vmi.metadata?.labels, [MEMORY_HOTPLUG_OVERHEAD_RATIO_LABEL]: String(ratio) } };
  }
}

function syncReadyCondition(status: VirtualMachineInstanceStatus, pod: V1Pod | undefined, vmiPodExists: boolean, now: string): void {
  // KubeVirt stamps its own not-ready reasons with both times, at metav1.Time's whole seconds.
  const notReady = (reason: string, message: string) => {
    const at = seconds(now) ?? now;
    setCondition(status, { ...condition(VMI_CONDITION.Ready, 'False', reason, message, at), lastProbeTime: at });
  };
  if (!pod || !vmiPodExists) {
    notReady('PodNotExists', 'virt-launcher pod has not yet been scheduled');
  } else if (isPodDownOrGoingDown(pod)) {
    notReady('PodTerminating', 'virt-launcher pod is terminating');
  } else if (status.phase !== 'Running') {
    notReady('GuestNotRunning', 'Guest VM is not reported as running');
  } else {
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    if (!ready) notReady('PodConditionMissing', 'virt-launcher pod is missing the Ready condition');
    // The pod's condition as KubeVirt copies it: empty reason and message omitted, the time at
    // metav1.Time's whole seconds.
    else setCondition(status, { ...condition(VMI_CONDITION.Ready, ready.status as 'True' | 'False' | 'Unknown', ready.reason ?? '', ready.message ?? '', now), lastProbeTime: seconds(toIso(ready.lastProbeTime as Date | string | undefined)) ?? null, lastTransitionTime: seconds(toIso(ready.lastTransitionTime)) ?? now });
  }
}

/**
 * The backend-storage PVC's `status.volumeStatus` entry, `persistent-state-for-this-vm`, with its
 * claim name and access modes; a legacy entry (`persistent-state-for…`) is renamed to it.
 */
function syncBackendVolumeStatus(status: VirtualMachineInstanceStatus, pvc: V1PersistentVolumeClaim): void {
  const entry = { name: BACKEND_VOLUME_STATUS_NAME, target: '', persistentVolumeClaimInfo: { claimName: pvc.metadata?.name ?? '', accessModes: [...(pvc.spec?.accessModes ?? [])] as ('ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOnce' | 'ReadWriteOncePod')[] } };
  const others = (status.volumeStatus ?? []).filter((v) => !v.name.startsWith('persistent-state-for'));
  const old = (status.volumeStatus ?? []).find((v) => v.name === BACKEND_VOLUME_STATUS_NAME);
  const next = { ...old, ...entry, target: old?.target ?? '' };
  if (old && JSON.stringify(old) === JSON.stringify(next) && others.length + 1 === (status.volumeStatus ?? []).length) return;
  status.volumeStatus = [...others, next];
}

/** `status.interfaces` from the pod's network status (network-status.ts), written only when it differs as a set. */
function syncInterfaces(vmi: VirtualMachineInstance, status: VirtualMachineInstanceStatus, pod: V1Pod): void {
  const next = interfacesFromPod(vmi, pod);
  if (!sameInterfaces(status.interfaces ?? [], next)) status.interfaces = next;
}

/** A temporary pod that failed: phase Failed, being deleted, or its compute container exited non-zero. */
function tempPodFailed(pod: V1Pod): boolean {
  if (pod.status?.phase === 'Failed' || pod.metadata?.deletionTimestamp) return true;
  const compute = pod.status?.containerStatuses?.find((c) => c.name === COMPUTE_CONTAINER);
  return (compute?.state?.terminated?.exitCode ?? 0) !== 0;
}

/** Mirror the pod's PodScheduled=False (e.g. Unschedulable) onto the VMI; drop it once it clears. */
function mirrorPodScheduled(status: VirtualMachineInstanceStatus, pod: V1Pod, now: string): void {
  const podCond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (podCond?.status === 'False') {
    setCondition(status, condition(VMI_CONDITION.PodScheduled, 'False', podCond.reason ?? '', podCond.message ?? '', now));
  } else if (findCondition(status, VMI_CONDITION.PodScheduled)?.status === 'False') {
    removeCondition(status, VMI_CONDITION.PodScheduled);
  }
}

/** `Synchronized=False` carries the last sync error; image pull problems override it. */
function syncSynchronizedCondition(status: VirtualMachineInstanceStatus, syncError: SyncError | undefined, pod: V1Pod | undefined, now: string): void {
  const pull = pod ? imagePullProblem(pod) : undefined;
  const err = pull ?? syncError;
  if (err) setCondition(status, condition(VMI_CONDITION.Synchronized, 'False', err.reason, err.message, now));
  else removeCondition(status, VMI_CONDITION.Synchronized);
}

function withoutKey(map: Record<string, string>, key: string): Record<string, string> {
  const { [key]: _drop, ...rest } = map;
  return rest;
}

/** An RFC 3339 time at whole seconds, as a metav1.Time serialises. */
function seconds(t: string | undefined): string | undefined {
  return t?.replace(/\.\d+Z$/, 'Z');
}

function toIso(t: Date | string | undefined): string | undefined {
  if (t === undefined) return undefined;
  return t instanceof Date ? t.toISOString() : t;
}
