/**
 * The VM controller's sync decision (reference.md §c.2), pure: from what was observed, the one
 * thing this pass does to the VMI or the DataVolumes. `reconcile.ts` carries it out;
 * `update-status.ts` reports it.
 */
import type { DataVolume, VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { dataVolumeReadiness, createsDataVolumesImmediately } from './data-volumes.ts';
import { decideRun, runStrategyOf, type RunDecision } from './run-strategy.ts';
import { backoffSecondsLeft } from './start-failure.ts';
import { ORPHAN_FINALIZER, VM_CONDITION } from './well-known.ts';
import { lostMidVolumeMigration } from './volume-migration/status.ts';

/** What the observe step found. */
export interface Observed {
  readonly vm: VirtualMachine;
  /** The same-name VMI, only when this VM controls it. */
  readonly vmi: VirtualMachineInstance | undefined;
  /** A same-name VMI this VM does not control (never touched). */
  readonly foreignVmi: VirtualMachineInstance | undefined;
  /** The templated DataVolumes that exist, by name. */
  readonly dataVolumes: ReadonlyMap<string, DataVolume>;
}

/** A sync error: `requeue` ones are retried with backoff, informal ones wait for the next event. */
export interface SyncError {
  readonly reason: string;
  readonly message: string;
  readonly requeue: boolean;
}

export type SyncDecision =
  | { readonly kind: 'none'; readonly error?: SyncError; readonly requeueAfterSeconds?: number; readonly failedDataVolumes?: readonly string[] }
  | { readonly kind: 'create-data-volumes'; readonly dataVolumes: readonly DataVolume[] }
  | { readonly kind: 'start' }
  | { readonly kind: 'stop'; readonly restartAfter: boolean }
  | { readonly kind: 'switch-to-always' };

function isDeleting(o: { metadata?: { deletionTimestamp?: string | null | undefined } | undefined }): boolean {
  return o.metadata?.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;
}

/** KubeVirt keeps its finalizer off a VM the garbage collector is orphaning, and off a VM with nothing left to stop. */
export function vmFinalizerWanted(o: Observed): boolean {
  if (!isDeleting(o.vm)) return true;
  return o.vmi !== undefined && !(o.vm.metadata?.finalizers ?? []).includes(ORPHAN_FINALIZER);
}

/** Decides this pass's action; `now` in epoch ms. */
export function decideSync(o: Observed, now: number): SyncDecision {
  const { vm, vmi } = o;
  const strategy = runStrategyOf(vm);
  if (!strategy.ok) return { kind: 'none', error: { reason: 'FailedCreate', message: strategy.message, requeue: false } };

  // VM being deleted: its VMI goes first (the VM's finalizer holds the VM until then).
  if (isDeleting(vm)) {
    if (!vmi || (vm.metadata?.finalizers ?? []).includes(ORPHAN_FINALIZER) || isDeleting(vmi)) return { kind: 'none' };
    return { kind: 'stop', restartAfter: false };
  }

  if (o.foreignVmi && !vmi) {
    const message = `VirtualMachineInstance ${o.foreignVmi.metadata?.name ?? ''} exists and is not controlled by this VirtualMachine`;
    return { kind: 'none', error: { reason: 'FailedCreate', message, requeue: false } };
  }

  // DataVolumes first: a VMI needs its disks populated (or waiting for their first consumer).
  const dvs = dataVolumeReadiness(vm, o.dataVolumes);
  const immediate = createsDataVolumesImmediately(vm);
  if (immediate && dvs.missing.length > 0) return { kind: 'create-data-volumes', dataVolumes: dvs.missing };
  if (immediate && !dvs.ready && strategy.strategy !== 'Halted') return { kind: 'none', failedDataVolumes: dvs.failed };

  const run: RunDecision = decideRun({ vm, strategy: strategy.strategy, vmi, backoffSeconds: backoffSecondsLeft(vm.status?.startFailure, now) });
  switch (run.kind) {
    case 'none':
      return { kind: 'none' };
    case 'backoff':
      return { kind: 'none', requeueAfterSeconds: run.seconds };
    case 'unsupported':
      return { kind: 'none', error: { reason: 'FailedCreate', message: run.message, requeue: false } };
    case 'stop':
      return { kind: 'stop', restartAfter: run.restartAfter };
    case 'switch-to-always':
      return { kind: 'switch-to-always' };
    case 'start':
      break;
  }
  // A restore rewrites the VM's spec and claims under the VMI's feet: nothing starts until the
  // restore controller clears `status.restoreInProgress` (its target must stay stopped meanwhile).
  if (vm.status?.restoreInProgress) return { kind: 'none' };
  // Deferred DataVolumes (`immediate-data-volume-creation: "false"`) are created by the start.
  if (!immediate && dvs.missing.length > 0) return { kind: 'create-data-volumes', dataVolumes: dvs.missing };
  if (!dvs.ready) return { kind: 'none', failedDataVolumes: dvs.failed };
  // A VMI lost mid volume migration (volume-migration/status.ts): the guest may have written to
  // either claim, so nothing starts until the user sets the volumes back. KubeVirt only logs it
  // ("cannot start the VM since it has the manual recovery required condtion set"): no Failure.
  // The pass that finds the VMI gone holds the start too, before the condition is written.
  const manualRecovery = vm.status?.conditions?.some((c) => c.type === VM_CONDITION.ManualRecoveryRequired && c.status === 'True');
  if (manualRecovery || lostMidVolumeMigration(vm)) return { kind: 'none' };
  return { kind: 'start' };
}
