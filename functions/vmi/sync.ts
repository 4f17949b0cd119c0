/**
 * The VMI controller's pod lifecycle decision (reference.md §a.3), as a pure function of what
 * was observed. `reconcile.ts` carries the decision out; `update-status.ts` reports it.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { isPodDownOrGoingDown, isPodFinal, isPodReady, isTempPod } from '../../shared/predicates/pods.ts';
import type { VolumeReadiness } from './volumes-ready.ts';
import type { HotplugObserved } from './hotplug/step.ts';
import { receiverWaiting } from './receiver.ts';
import { tscRequirement } from '../../shared/topology/hints.ts';

/** What the observe step found. */
export interface Observed {
  readonly vmi: VirtualMachineInstance;
  /** Pods controlled by the VMI (launcher, target and temp pods). */
  readonly pods: readonly V1Pod[];
  /** The current launcher (or temp) pod, per CurrentVMIPod. */
  readonly pod: V1Pod | undefined;
  readonly volumes: VolumeReadiness;
  /** The VMI's migrations; read only before a launcher pod can be created (step 6), else empty. */
  readonly migrations: readonly VirtualMachineInstanceMigration[];
  /** The backend-storage PVC (persistent TPM/EFI), read only when the VMI needs one. */
  readonly backendPvc?: V1PersistentVolumeClaim;
  /** Attachment pods and hotplug claims, read only for a VMI with hotplug volumes (hotplug/step.ts). */
  readonly hotplug?: HotplugObserved;
  /**
   * The claims of the VMI's volumes by name (shared/storage/launcher-claims.ts), read while they
   * matter: before the launcher pod (Block or Filesystem, shared or not) and from the hand-off on (`status.volumeStatus`).
   */
  readonly claims?: ReadonlyMap<string, V1PersistentVolumeClaim>;
  /** The DataVolumes behind its volumes, read every pass (data-volumes-ready.ts). */
  readonly dataVolumes?: readonly DataVolume[];
}

/** A sync error: `requeue` ones are retried with backoff, informal ones wait for an event. */
export interface SyncError {
  readonly reason: string;
  readonly message: string;
  readonly requeue: boolean;
}

export type SyncDecision =
  | { readonly kind: 'none'; readonly error?: SyncError }
  | { readonly kind: 'create-pod'; readonly wffc: boolean }
  | { readonly kind: 'delete-pods'; readonly pods: readonly V1Pod[] }
  /** WFFC temporary pods whose job is done (their claims are bound): deleted with grace 0. */
  | { readonly kind: 'delete-temp-pods'; readonly pods: readonly V1Pod[] };

const NOT_RUNNING_MIGRATION_PHASES = new Set(['', 'Pending', 'WaitingForSync', 'Synchronizing', 'Succeeded', 'Failed']);

/** True for a migration that is past its pending phases and not finished (`migration.IsRunning`). */
export function isMigrationRunning(m: VirtualMachineInstanceMigration): boolean {
  return !NOT_RUNNING_MIGRATION_PHASES.has(m.status?.phase ?? '');
}

/** `""` or `Pending`: the controller has not yet created anything for this VMI. */
export function isUnprocessed(vmi: VirtualMachineInstance): boolean {
  const phase = vmi.status?.phase ?? '';
  return phase === '' || phase === 'Pending';
}

export function isFinal(vmi: VirtualMachineInstance): boolean {
  const phase = vmi.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Decides the one kind of mutation this pass makes (docs/architecture.md §6: one kind of mutation a pass). */
export function decideSync(o: Observed): SyncDecision {
  const { vmi } = o;
  // 1. Being deleted: every pod it controls goes, except ones already terminating gracefully
  //    (a final pod is deleted again so it is removed rather than left behind).
  if (vmi.metadata?.deletionTimestamp) {
    const pods = o.pods.filter((p) => p.metadata?.deletionTimestamp === undefined || isPodFinal(p));
    return pods.length > 0 ? { kind: 'delete-pods', pods } : { kind: 'none' };
  }
  // 2. Final: the launcher pod stays until the VMI itself is deleted.
  if (isFinal(vmi)) return { kind: 'none' };

  // 4. Volumes must be populated before a launcher pod can use them.
  if (o.volumes.missingPvc) {
    return {
      kind: 'none',
      error: { reason: 'FailedPvcNotFound', message: `PVC ${o.volumes.missingPvc} does not exist, waiting for it to appear`, requeue: false },
    };
  }

  // 5. A receiver VMI waits for its migration's sync (the target-node label) before anything.
  if (receiverWaiting(vmi)) return { kind: 'none' };
  if (o.pod === undefined) {
    // 6. Never re-create a pod for a VMI that got past Pending: losing it fails the VMI instead.
    if (!isUnprocessed(vmi)) return { kind: 'none' };
    // A VMI that needs a TSC frequency waits for its topology hint (shared/topology/hints.ts).
    if (tscRequirement(vmi) && vmi.status?.topologyHints === undefined) return { kind: 'none' };
    if (o.volumes.failedDataVolume) return { kind: 'none' };
    if (!o.volumes.ready) return { kind: 'none' };
    if (o.migrations.some(isMigrationRunning)) {
      return { kind: 'none', error: { reason: 'FailedCreate', message: 'active migration exists', requeue: true } };
    }
    return { kind: 'create-pod', wffc: o.volumes.wffc };
  }
  // 7. A pod exists and no volume waits for its first consumer any more: the temporary pods have
  //    done their job. A Pending one is never deleted (its claims may still be binding).
  if (!o.volumes.wffc) {
    const done = o.pods.filter((p) => isTempPod(p) && TEMP_POD_DONE_PHASES.has(p.status?.phase ?? '') && p.metadata?.deletionTimestamp === undefined);
    if (done.length > 0) return { kind: 'delete-temp-pods', pods: done };
  }
  return { kind: 'none' };
}

/** Phases in which a WFFC temporary pod is deleted once no volume waits for its first consumer. */
const TEMP_POD_DONE_PHASES = new Set(['Running', 'Succeeded', 'Failed']);

/** True when the VMI has a live (not down, not temp) launcher pod. */
export function hasLivePod(o: Observed): boolean {
  return o.pod !== undefined && !isPodDownOrGoingDown(o.pod);
}

/** KubeVirt's sync-error reason for a dedicated-CPU VMI whose launcher pod is not Guaranteed. */
export const FAILED_GUARANTEE_REASON = 'FailedGuaranteeResources';

/**
 * A dedicated-CPU VMI whose ready launcher pod did not get the `Guaranteed` QoS class (the API
 * server sets it from the pod's requests and limits) is not handed off: KubeVirt's
 * `updateStatus` records `FailedGuaranteeResources` and leaves the VMI `Scheduling`.
 */
export function guaranteeProblem(o: Observed): SyncError | undefined {
  const { vmi, pod } = o;
  if ((vmi.status?.phase ?? '') !== 'Scheduling' || !pod || isTempPod(pod) || !isPodReady(pod) || vmi.metadata?.deletionTimestamp) return undefined;
  if (vmi.spec.domain.cpu?.dedicatedCpuPlacement !== true || pod.status?.qosClass === 'Guaranteed') return undefined;
  return { reason: FAILED_GUARANTEE_REASON, message: 'failed to guarantee pod resources', requeue: false };
}
