/**
 * `status.printableStatus`, what `kubectl get vm` shows (reference.md §c.4). The statuses are not
 * mutually exclusive (a VM can be Running and Migrating, Paused and Terminating); KubeVirt's
 * precedence is the order of the checks below, first match wins. Pure.
 */
import type { DataVolume, VirtualMachine, VirtualMachineInstance, VirtualMachinePrintableStatus } from '../../shared/api/index.ts';
import { VMI_CONDITION } from '../../shared/api/well-known.ts';
import { hasDataVolumeError, isDataVolumeProvisioning, isDataVolumeUnbound } from './data-volumes.ts';
import { isFinal, isSetToStart } from './run-strategy.ts';
import type { RunStrategy } from './well-known.ts';

export interface PrintableInput {
  readonly vm: VirtualMachine;
  /** Undefined when the spec names no valid strategy. */
  readonly strategy: RunStrategy | undefined;
  readonly vmi: VirtualMachineInstance | undefined;
  /** The DataVolumes the VM's template volumes name (templated or not) that exist. */
  readonly dataVolumes: readonly DataVolume[];
  /** A claim the template's volumes name (PVC, DataVolume, memory dump) exists and is not Bound (KubeVirt's HasUnboundPVC). */
  readonly unboundClaim?: boolean;
  /** A VMI creation is recorded and not yet observed. */
  readonly creationExpected: boolean;
  /** A VMI deletion is recorded and not yet observed. */
  readonly deletionExpected: boolean;
  /** `status.startFailure.consecutiveFailCount` as this pass computes it. */
  readonly consecutiveFailCount: number;
  /** Epoch ms. */
  readonly now: number;
}

function vmiCondition(vmi: VirtualMachineInstance | undefined, type: string): { status: string; reason?: string | undefined } | undefined {
  return vmi?.status?.conditions?.find((c) => c.type === type);
}

function synchronizedFailure(vmi: VirtualMachineInstance | undefined, reason: string): boolean {
  const c = vmiCondition(vmi, VMI_CONDITION.Synchronized);
  return c?.status === 'False' && c.reason === reason;
}

function isMigrating(vmi: VirtualMachineInstance | undefined, now: number): boolean {
  const state = vmi?.status?.migrationState;
  if (!state?.startTimestamp || Date.parse(state.startTimestamp) > now) return false;
  return !(state.endTimestamp && Date.parse(state.endTimestamp) <= now);
}

function isPaused(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi?.status?.phase === 'Running' && vmiCondition(vmi, VMI_CONDITION.Paused)?.status === 'True';
}

const STARTING_PHASES = new Set(['', 'Pending', 'Scheduling', 'Scheduled']);

/** The ordered checks: first match wins. */
const CHECKS: readonly (readonly [VirtualMachinePrintableStatus, (i: PrintableInput) => boolean])[] = [
  ['Terminating', (i) => Boolean(i.vm.metadata?.deletionTimestamp)],
  ['Stopping', (i) => i.vmi !== undefined && !isFinal(i.vmi) && (Boolean(i.vmi.metadata?.deletionTimestamp) || i.deletionExpected)],
  ['Migrating', (i) => isMigrating(i.vmi, i.now)],
  ['Paused', (i) => isPaused(i.vmi)],
  ['Running', (i) => i.vmi?.status?.phase === 'Running'],
  ['ErrorPvcNotFound', (i) => synchronizedFailure(i.vmi, 'FailedPvcNotFound')],
  ['DataVolumeError', (i) => i.dataVolumes.some(hasDataVolumeError)],
  [
    'ErrorUnschedulable',
    (i) => {
      const c = vmiCondition(i.vmi, VMI_CONDITION.PodScheduled);
      return c?.status === 'False' && c.reason === 'Unschedulable';
    },
  ],
  ['Provisioning', (i) => i.dataVolumes.some(isDataVolumeProvisioning)],
  ['WaitingForVolumeBinding', (i) => isSetToStart(i.vm, i.strategy, i.vmi) && (i.unboundClaim === true || i.dataVolumes.some(isDataVolumeUnbound))],
  ['ErrImagePull', (i) => synchronizedFailure(i.vmi, 'ErrImagePull')],
  ['ImagePullBackOff', (i) => synchronizedFailure(i.vmi, 'ImagePullBackOff')],
  ['Starting', (i) => (i.vmi ? STARTING_PHASES.has(i.vmi.status?.phase ?? '') : i.creationExpected)],
  [
    'CrashLoopBackOff',
    (i) =>
      (i.vmi === undefined || isFinal(i.vmi)) &&
      !i.creationExpected &&
      i.consecutiveFailCount > 0 &&
      (i.strategy === 'Always' || i.strategy === 'RerunOnFailure' || i.strategy === 'Once'),
  ],
  ['Stopped', (i) => (i.vmi ? isFinal(i.vmi) : !i.creationExpected)],
];

/** The VM's printable status. */
/**
 * Whether the claims' phase can still decide the status (so a caller reads them only then): the
 * VM wants a VMI and none is past starting (a running, paused, migrating or stopping one is
 * reported before WaitingForVolumeBinding is looked at).
 */
export function unboundClaimMatters(vm: VirtualMachine, strategy: RunStrategy | undefined, vmi: VirtualMachineInstance | undefined): boolean {
  return isSetToStart(vm, strategy, vmi) && (vmi === undefined || (STARTING_PHASES.has(vmi.status?.phase ?? '') && !vmi.metadata?.deletionTimestamp));
}

export function printableStatus(input: PrintableInput): VirtualMachinePrintableStatus {
  for (const [status, matches] of CHECKS) if (matches(input)) return status;
  return 'Unknown';
}
