/**
 * The migration's phase machine (reference §d.3), pure: from the stored phase and what was
 * observed, the phase it should now have and, when it fails, why. Failure checks come first, as
 * in KubeVirt's `processMigrationPhase`; then the normal progression
 * `'' → Pending → Scheduling → Scheduled → PreparingTarget → TargetReady → Running → Succeeded`.
 * Unlike KubeVirt (one step per informer event) several steps may be taken in one pass when
 * their conditions already hold: each step is still recorded in phaseTransitionTimestamps, and a
 * stateless function saves a reconcile (3 reads + a write) per step it does not have to wait for.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { MigrationPhase, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { isHotplugInProgress } from '../../shared/liveupdate/hotplug-conditions.ts';
import { isPodDownOrGoingDown, isPodFinal, isPodReady } from '../../shared/predicates/pods.ts';
import { attachmentReady } from './attachment-pod.ts';

/** Phases in which KubeVirt counts a migration as "running" (`IsRunning`): from Scheduling on. */
const RUNNING_PHASES: ReadonlySet<MigrationPhase> = new Set(['Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running']);

export function isFinal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** KubeVirt's `IsRunning`: any phase other than unset/Pending/WaitingForSync/Synchronizing/final. */
export function isRunningPhase(phase: string | undefined): boolean {
  return RUNNING_PHASES.has((phase ?? '') as MigrationPhase);
}

/** Failure messages, as KubeVirt's FailedMigration events word them. */
export const FAILURE = {
  vmiMissing: 'Migration failed because vmi does not exist.',
  vmiShutdown: 'Migration failed because vmi shutdown during migration',
  canceled: 'Migration failed due to being canceled',
  targetPodDown: 'Migration failed because target pod shutdown during migration',
  targetPodRemoved: 'Migration target pod was removed during active migration.',
  stateCleared: 'Migration failed because VMI migration state was cleared',
  otherMigration: 'Migration failed because VMI migration state belongs to another migration',
  attachmentPodDown: 'Migration failed because target attachment pod shutdown during migration',
  sourceReported: 'source node reported migration failed',
  notEligible: 'VMI is not eligible for migration because another migration job is in progress.',
} as const;

export interface PhaseInput {
  readonly migration: VirtualMachineInstanceMigration;
  readonly vmi: VirtualMachineInstance | undefined;
  /** This migration's target pod, if one exists. */
  readonly targetPod: V1Pod | undefined;
  /** Another unfinished migration's UID holds `vmi.status.migrationState`. */
  readonly otherMigrationActive: boolean;
  /** The VMI has hotplugged volumes: Scheduling and Scheduled wait for the target's attachment pod. */
  readonly hotplug?: boolean;
  /** The target pod's attachment pod, if one exists. */
  readonly attachmentPod?: V1Pod | undefined;
  /** Held in Pending (a running backup, utility volumes: pending-blocks.ts); with `failure`, failed by it. */
  readonly blocked?: { readonly failure?: string };
}

export interface PhaseResult {
  readonly phase: MigrationPhase;
  /** The phases passed through, in order (for phaseTransitionTimestamps); empty when unchanged. */
  readonly steps: readonly MigrationPhase[];
  /** Why it failed (the FailedMigration event message). */
  readonly failure?: string;
  /** Deleted after hand-off: ask virt-handler to abort (condition migrationAbortRequested). */
  readonly abortRequested?: boolean;
  /**
   * The failure is an interruption (the target pod down or gone, the VMI ended): KubeVirt's
   * `interruptMigration`, which for a migration moving backend storage runs the recovery Job
   * (recovery.ts) instead of failing at once.
   */
  readonly interrupted?: boolean;
  /** Succeeded through the recovery Job after this interruption (KubeVirt still reports it as FailedMigration). */
  readonly recoveredFrom?: string;
}

/** The migration's phase after this pass. */
export function nextPhase(input: PhaseInput): PhaseResult {
  const start = (input.migration.status?.phase ?? '') as MigrationPhase;
  if (isFinal(start)) return { phase: start, steps: [] };
  const failure = failureOf(start, input);
  if (failure) return { phase: 'Failed', steps: ['Failed'], failure: failure.message, ...(failure.abort ? { abortRequested: true } : {}), ...(failure.interrupted ? { interrupted: true } : {}) };

  const steps: MigrationPhase[] = [];
  let phase = start;
  for (let next = step(phase, input); next !== undefined; next = step(phase, input)) {
    phase = next;
    steps.push(next);
    if (isFinal(next)) break;
  }
  const abortRequested = input.migration.metadata?.deletionTimestamp !== undefined && handedOff(input);
  const failedStep = phase === 'Failed' ? FAILURE.notEligible : undefined;
  return { phase, steps, ...(failedStep ? { failure: failedStep } : {}), ...(abortRequested ? { abortRequested } : {}) };
}

/** `vmi.status.migrationState` names this migration. */
export function handedOff(input: Pick<PhaseInput, 'migration' | 'vmi'>): boolean {
  const uid = input.migration.metadata?.uid;
  return uid !== undefined && input.vmi?.status?.migrationState?.migrationUid === uid;
}

function failureOf(phase: MigrationPhase, input: PhaseInput): { message: string; abort?: boolean; interrupted?: boolean } | undefined {
  const { vmi, targetPod, migration } = input;
  if (!vmi) return { message: FAILURE.vmiMissing };
  const ours = handedOff(input);
  const vmiPhase = vmi.status?.phase;
  if ((vmiPhase === 'Succeeded' || vmiPhase === 'Failed') && !ours) return { message: FAILURE.vmiShutdown, interrupted: true };
  if (migration.metadata?.deletionTimestamp && !ours) return { message: FAILURE.canceled, abort: true };
  if (targetPod && isPodFinal(targetPod)) return { message: FAILURE.targetPodDown, interrupted: true };
  if (isRunningPhase(phase) && !targetPod) return { message: FAILURE.targetPodRemoved, interrupted: true };
  const afterHandOff = phase === 'PreparingTarget' || phase === 'TargetReady' || phase === 'Running';
  const ms = vmi.status?.migrationState;
  if (afterHandOff && !ms) return { message: FAILURE.stateCleared };
  if (afterHandOff && !ours) return { message: FAILURE.otherMigration };
  if (ours && ms?.failed) return { message: ms.failureReason ? `${FAILURE.sourceReported}: ${ms.failureReason}` : FAILURE.sourceReported };
  if (input.attachmentPod && isPodFinal(input.attachmentPod)) return { message: FAILURE.attachmentPodDown };
  if ((phase === '' || phase === 'Pending') && input.blocked?.failure) return { message: input.blocked.failure };
  return undefined;
}

/** The next phase of the normal progression, or undefined to stay. */
function step(phase: MigrationPhase, input: PhaseInput): MigrationPhase | undefined {
  const { vmi, targetPod } = input;
  const ms = vmi?.status?.migrationState;
  switch (phase) {
    case '':
      return input.otherMigrationActive ? 'Failed' : 'Pending';
    case 'Pending':
      if (input.blocked) return undefined;
      return targetPod && !isPodDownOrGoingDown(targetPod) && attachmentReady(input.hotplug === true, input.attachmentPod) ? 'Scheduling' : undefined;
    case 'Scheduling':
      return targetPod && isPodReady(targetPod) && attachmentReady(input.hotplug === true, input.attachmentPod) ? 'Scheduled' : undefined;
    case 'Scheduled':
      return handedOff(input) && ms?.targetNode ? 'PreparingTarget' : undefined;
    case 'PreparingTarget':
      return ms?.targetNode && ms.targetNodeAddress ? 'TargetReady' : undefined;
    case 'TargetReady':
      return ms?.startTimestamp ? 'Running' : undefined;
    case 'Running':
      return ms?.completed && !ms.failed && !hotplugPending(vmi) ? 'Succeeded' : undefined;
    default:
      return undefined;
  }
}

/**
 * A hotplug change still in progress holds Succeeded back (KubeVirt waits for it): the target
 * virt-handler removes `HotVCPUChange` / `HotMemoryChange` once it has applied the change.
 */
function hotplugPending(vmi: VirtualMachineInstance | undefined): boolean {
  return isHotplugInProgress(vmi);
}
