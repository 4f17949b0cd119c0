/**
 * Run strategies (reference.md §c.3): which strategy a VM has, and — given the VMI that exists (or
 * not) and the pending state-change requests — whether this pass starts, stops or leaves the VMI.
 * Pure; `sync.ts` puts it in order with deletion and DataVolumes, `reconcile.ts` acts on it.
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { RUN_STRATEGIES, START_REQUEST, STOP_REQUEST, type RunStrategy } from './well-known.ts';

/** The VM's strategy, or why it has none (a spec the webhook would have rejected). */
export type StrategyResult = { readonly ok: true; readonly strategy: RunStrategy } | { readonly ok: false; readonly message: string };

/**
 * KubeVirt's `VirtualMachine.RunStrategy()`: the deprecated `running` and `runStrategy` are
 * mutually exclusive; `running: true` means Always, `running: false` or neither means Halted.
 */
export function runStrategyOf(vm: VirtualMachine): StrategyResult {
  const { running, runStrategy } = vm.spec;
  if (running !== undefined && runStrategy !== undefined) {
    return { ok: false, message: 'running and runstrategy are mutually exclusive' };
  }
  if (running !== undefined) return { ok: true, strategy: running ? 'Always' : 'Halted' };
  if (runStrategy === undefined) return { ok: true, strategy: 'Halted' };
  if (!(RUN_STRATEGIES as readonly string[]).includes(runStrategy)) return { ok: false, message: `unknown runstrategy "${runStrategy}"` };
  return { ok: true, strategy: runStrategy as RunStrategy };
}

export function isFinal(vmi: VirtualMachineInstance | undefined): boolean {
  const phase = vmi?.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Only the first request counts: requests are served in order, one at a time. */
export function hasStartRequest(vm: VirtualMachine): boolean {
  return vm.status?.stateChangeRequests?.[0]?.action === START_REQUEST;
}

/** A Stop aimed at this very VMI (by UID): a Stop for an older VMI never stops a newer one. */
export function hasStopRequestFor(vm: VirtualMachine, vmi: VirtualMachineInstance): boolean {
  const first = vm.status?.stateChangeRequests?.[0];
  return first?.action === STOP_REQUEST && first.uid !== undefined && first.uid === vmi.metadata?.uid;
}

/** What the strategy wants done with the VMI this pass. */
export type RunDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'start' }
  /** `restartAfter`: RerunOnFailure appends a Start request so the Failed VMI is recreated. */
  | { readonly kind: 'stop'; readonly restartAfter: boolean }
  /** Start-failure backoff: try again after this many seconds. */
  | { readonly kind: 'backoff'; readonly seconds: number }
  /** A start request on a Halted VM: switch the spec to Always (the next pass starts it). */
  | { readonly kind: 'switch-to-always' }
  | { readonly kind: 'unsupported'; readonly message: string };

export interface RunInput {
  readonly vm: VirtualMachine;
  readonly strategy: RunStrategy;
  /** The VMI controlled by this VM, if any. */
  readonly vmi: VirtualMachineInstance | undefined;
  /** Seconds left of the start-failure backoff (≤ 0: none). */
  readonly backoffSeconds: number;
}

/** The run-strategy matrix of reference.md §c.3. */
export function decideRun(input: RunInput): RunDecision {
  const { vm, strategy, vmi } = input;
  const deleting = vmi?.metadata?.deletionTimestamp !== undefined && vmi?.metadata?.deletionTimestamp !== null;
  const startUnlessBackoff = (): RunDecision => (input.backoffSeconds > 0 ? { kind: 'backoff', seconds: input.backoffSeconds } : { kind: 'start' });
  // A VMI already going away is left to go: deleting it again would only re-send the request.
  const stop = (restartAfter = false): RunDecision => (deleting ? { kind: 'none' } : { kind: 'stop', restartAfter });

  switch (strategy) {
    case 'Always':
      // A stopped or finished VMI is deleted; a later pass (once it is gone) starts a new one.
      if (vmi) return hasStopRequestFor(vm, vmi) || isFinal(vmi) ? stop() : { kind: 'none' };
      return startUnlessBackoff();
    case 'RerunOnFailure': {
      if (vmi) {
        const phase = vmi.status?.phase;
        if (hasStopRequestFor(vm, vmi) || phase === 'Failed' || phase === 'Succeeded') return stop(phase === 'Failed');
        return { kind: 'none' };
      }
      // Started once already (status remembers the strategy): only a Start request — the one a
      // failure appended, or the user's — starts it again. Success is final.
      if (hasStartRequest(vm) || vm.status?.runStrategy !== 'RerunOnFailure') return startUnlessBackoff();
      return { kind: 'none' };
    }
    case 'Manual':
      if (vmi) return hasStopRequestFor(vm, vmi) ? stop() : { kind: 'none' };
      return hasStartRequest(vm) ? { kind: 'start' } : { kind: 'none' };
    case 'Halted':
      if (vmi) return stop();
      return hasStartRequest(vm) ? { kind: 'switch-to-always' } : { kind: 'none' };
    case 'Once':
      // Whatever became of the one VMI (even final) stays; only no VMI at all starts one.
      return vmi ? { kind: 'none' } : { kind: 'start' };
    case 'WaitAsReceiver':
      return { kind: 'unsupported', message: 'runStrategy WaitAsReceiver (decentralized live migration) is not supported' };
  }
}

/**
 * KubeVirt's `isSetToStart`: whether the VM wants a VMI now (used by printableStatus'
 * WaitingForVolumeBinding, which only applies to a VM that is meant to run).
 */
export function isSetToStart(vm: VirtualMachine, strategy: RunStrategy | undefined, vmi: VirtualMachineInstance | undefined): boolean {
  switch (strategy) {
    case 'Always':
      return true;
    case 'Manual':
      return vmi ? !isFinal(vmi) : hasStartRequest(vm);
    case 'RerunOnFailure':
      return vmi ? vmi.status?.phase !== 'Succeeded' : true;
    case 'Once':
      return vmi ? !isFinal(vmi) : true;
    default:
      return false;
  }
}
