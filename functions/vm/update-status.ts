/**
 * The VM controller's status computation (reference.md §c.4), pure: from the VM as read, what was
 * observed (including a VMI this pass just created or deleted) and the sync error, the VM status
 * as it should now be. `reconcile.ts` writes the difference through `/status`.
 */
import type { DataVolume, VirtualMachineCondition, VirtualMachineInstance, VirtualMachineMemoryDumpRequest, VirtualMachineStatus, VolumeUpdateState } from '../../shared/api/index.ts';
import { VMI_CONDITION } from '../../shared/api/well-known.ts';
import { volumeDataVolumeNames } from './data-volumes.ts';
import { printableStatus } from './printable-status.ts';
import { trimVolumeRequests } from './hotplug/volume-requests.ts';
import { isFinal, runStrategyOf } from './run-strategy.ts';
import { nextStartFailure } from './start-failure.ts';
import type { Observed, SyncError } from './sync.ts';
import { START_REQUEST, STOP_REQUEST, VM_CONDITION, VM_GENERATION_ANNOTATION } from './well-known.ts';
import { syncVolumeMigrationStatus } from './volume-migration/status.ts';

export interface VmStatusInput {
  readonly observed: Observed;
  readonly syncError: SyncError | undefined;
  readonly creationExpected: boolean;
  readonly deletionExpected: boolean;
  /**
   * `RestartRequired` after this pass (liveupdate/step.ts; `clear` too when the pass started or
   * stopped the VMI); undefined leaves the condition as it is.
   */
  readonly restartRequired?: { readonly kind: 'clear' } | { readonly kind: 'set'; readonly message: string } | undefined;
  /** `status.memoryDumpRequest` after the memory-dump step: undefined = as read, null = dropped. */
  readonly memoryDumpRequest?: VirtualMachineMemoryDumpRequest | null | undefined;
  /** `status.volumeUpdateState` after the volume-update handler: undefined = as read. */
  readonly volumeUpdateState?: VolumeUpdateState | undefined;
  /** `status.changedBlockTracking.state` after this pass (cbt.ts): undefined = none; absent from the input = as read. */
  readonly cbtState?: string | undefined;
  /** A claim the template's volumes name exists and is not Bound (read only when it can decide the status: `unboundClaimRead`). */
  readonly unboundClaim?: boolean | undefined;
  /** Epoch ms. */
  readonly now: number;
  /** ∈ [0, 1), for the start-failure jitter. */
  readonly random: number;
}

/** The VM status after this pass. Never mutates its input. */
export function computeVmStatus(input: VmStatusInput): VirtualMachineStatus {
  const { observed, now } = input;
  const { vm, vmi } = observed;
  const status: VirtualMachineStatus = structuredClone(vm.status ?? {});
  const iso = new Date(now).toISOString();
  const strategyResult = runStrategyOf(vm);
  const strategy = strategyResult.ok ? strategyResult.strategy : undefined;

  if ('cbtState' in input) {
    if (input.cbtState === undefined) delete status.changedBlockTracking;
    else status.changedBlockTracking = { ...status.changedBlockTracking, state: input.cbtState as NonNullable<VirtualMachineStatus['changedBlockTracking']>['state'] };
  }
  // KubeVirt's `created` and `ready` are `omitempty` booleans: false is written as absent.
  if (vmi !== undefined) status.created = true;
  else delete status.created;
  if (vmi !== undefined && vmiCondition(vmi, VMI_CONDITION.Ready)?.status === 'True') status.ready = true;
  else delete status.ready;

  if (vmi) {
    const generation = Number(vmi.metadata?.annotations?.[VM_GENERATION_ANNOTATION]);
    if (Number.isFinite(generation)) status.observedGeneration = generation;
    if (vm.metadata?.generation !== undefined) status.desiredGeneration = vm.metadata.generation;
  }
  // Remembered so RerunOnFailure can tell "never started" from "finished": only once a VMI existed.
  if (strategy && (status.runStrategy !== undefined || vmi)) status.runStrategy = strategy;

  const startFailure = nextStartFailure(status.startFailure, strategy, vmi, now, input.random);
  if (startFailure) status.startFailure = startFailure;
  else delete status.startFailure;

  trimStateChangeRequest(status, vmi);
  if (input.memoryDumpRequest === null) delete status.memoryDumpRequest;
  else if (input.memoryDumpRequest !== undefined) status.memoryDumpRequest = input.memoryDumpRequest;
  if (status.volumeRequests) {
    const left = trimVolumeRequests(vm.spec.template.spec, status.volumeRequests);
    if (left.length > 0) status.volumeRequests = left;
    else delete status.volumeRequests;
  }
  if (input.volumeUpdateState !== undefined) status.volumeUpdateState = input.volumeUpdateState;
  // Before the VMI's conditions are mirrored: it reads the VolumesChange the VM showed so far.
  syncVolumeMigrationStatus(status, vm, vmi, iso);
  syncConditions(status, vmi, input.syncError, iso);
  syncRestartRequired(status, input.restartRequired, iso);

  // KubeVirt reads the DataVolumes the template's volumes name, templated or not.
  const names = new Set(volumeDataVolumeNames(vm));
  const dataVolumes: DataVolume[] = [...observed.dataVolumes.entries()].filter(([n]) => names.has(n)).map(([, dv]) => dv);
  status.printableStatus = printableStatus({
    vm,
    strategy,
    vmi,
    dataVolumes,
    unboundClaim: input.unboundClaim === true,
    creationExpected: input.creationExpected,
    deletionExpected: input.deletionExpected,
    consecutiveFailCount: startFailure?.consecutiveFailCount ?? 0,
    now,
  });
  return status;
}

function vmiCondition(vmi: VirtualMachineInstance, type: string): VirtualMachineCondition | undefined {
  return vmi.status?.conditions?.find((c) => c.type === type);
}

/**
 * Drops the first state-change request once it is done: a Stop when its VMI is gone (or it names
 * another VMI, or none), a Start once a live VMI exists. One per pass, as KubeVirt does; the
 * status write that drops it triggers the next pass.
 */
function trimStateChangeRequest(status: VirtualMachineStatus, vmi: VirtualMachineInstance | undefined): void {
  const first = status.stateChangeRequests?.[0];
  if (!first) return;
  let done = false;
  if (first.action === STOP_REQUEST) done = !vmi || first.uid === undefined || first.uid !== vmi.metadata?.uid;
  else if (first.action === START_REQUEST) done = vmi !== undefined && !isFinal(vmi) && !vmi.metadata?.deletionTimestamp;
  if (!done) return;
  const rest = status.stateChangeRequests!.slice(1);
  if (rest.length > 0) status.stateChangeRequests = rest;
  else delete status.stateChangeRequests;
}

const OWN_CONDITIONS = new Set<string>([VM_CONDITION.Ready, VM_CONDITION.Failure, VM_CONDITION.RestartRequired, VM_CONDITION.ManualRecoveryRequired]);

/** Sets `cond` unless one of its type already has the same status and reason (keeps transition times). */
function setCondition(list: VirtualMachineCondition[], cond: VirtualMachineCondition): VirtualMachineCondition[] {
  const old = list.find((c) => c.type === cond.type);
  if (old && old.status === cond.status && old.reason === cond.reason) return list;
  return [...list.filter((c) => c.type !== cond.type), cond];
}

/**
 * `RestartRequired` carries no reason; an existing True one keeps its first message (KubeVirt's
 * UpdateCondition). It is never mirrored from the VMI.
 */
function syncRestartRequired(status: VirtualMachineStatus, decision: VmStatusInput['restartRequired'], now: string): void {
  if (!decision) return;
  const list = status.conditions ?? [];
  if (decision.kind === 'clear') {
    const kept = list.filter((c) => c.type !== VM_CONDITION.RestartRequired);
    if (kept.length === list.length) return;
    if (kept.length > 0) status.conditions = kept;
    else delete status.conditions;
    return;
  }
  if (list.some((c) => c.type === VM_CONDITION.RestartRequired && c.status === 'True')) return;
  const cond: VirtualMachineCondition = { type: VM_CONDITION.RestartRequired, status: 'True', message: decision.message, lastProbeTime: null, lastTransitionTime: now };
  status.conditions = [...list.filter((c) => c.type !== VM_CONDITION.RestartRequired), cond];
}

/** Ready from the VMI, Failure from the sync error, every other VMI condition mirrored. */
function syncConditions(status: VirtualMachineStatus, vmi: VirtualMachineInstance | undefined, syncError: SyncError | undefined, now: string): void {
  let list = [...(status.conditions ?? [])];
  const cond = (type: string, s: string, reason: string, message: string): VirtualMachineCondition => ({ type, status: s, reason, message, lastProbeTime: null, lastTransitionTime: now });
  // KubeVirt stamps both times on the Ready conditions it makes itself (not on the Failure one).
  const probed = (type: string, s: string, reason: string, message: string): VirtualMachineCondition => ({ ...cond(type, s, reason, message), lastProbeTime: now });

  const ready = vmi ? vmiCondition(vmi, VMI_CONDITION.Ready) : undefined;
  if (!vmi) list = setCondition(list, probed(VM_CONDITION.Ready, 'False', 'VMINotExists', 'VMI does not exist'));
  else if (!ready) list = setCondition(list, probed(VM_CONDITION.Ready, 'False', 'VMIConditionMissing', 'VMI is missing the Ready condition'));
  else list = setCondition(list, { ...ready, lastProbeTime: ready.lastProbeTime ?? null });

  if (syncError) list = setCondition(list, cond(VM_CONDITION.Failure, 'True', syncError.reason, syncError.message));
  else list = list.filter((c) => c.type !== VM_CONDITION.Failure);

  // Mirror the VMI's other conditions (Paused, AgentConnected, LiveMigratable…); drop ones it no
  // longer has. Without a VMI, KubeVirt leaves the mirrored ones as they are (a stopped VM keeps
  // the last VMI's, e.g. LiveMigratable and DataVolumesReady).
  if (vmi) {
    const vmiConds = (vmi.status?.conditions ?? []).filter((c) => !OWN_CONDITIONS.has(c.type));
    list = list.filter((c) => OWN_CONDITIONS.has(c.type) || vmiConds.some((v) => v.type === c.type));
    for (const c of vmiConds) list = setCondition(list, structuredClone(c));
  }

  if (list.length > 0) status.conditions = list;
  else delete status.conditions;
}
