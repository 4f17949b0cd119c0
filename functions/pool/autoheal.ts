/**
 * Autohealing (reference §2.7): VMs that keep failing to start are deleted (and replaced by a
 * later scale-out). A VM is a candidate when its start failures reached
 * `startUpFailureThreshold` (default 3), or when its printable status is one of the start errors
 * and its `Ready=False` condition was last probed at least `minFailingToStartDuration` (default
 * 5m) ago — measured from `lastProbeTime`, as upstream (Q-P14). Pure.
 *
 * Upstream considers every VM of the namespace, the pool's or not (Q-P2): a pool with
 * autohealing would delete a crash-looping VM it does not own. Here only the pool's own VMs are
 * candidates (see docs/pool-controller.md).
 */
import type { VirtualMachine, VirtualMachinePoolAutohealingStrategy } from '../../shared/api/index.ts';
import { parseDurationMs } from '../../shared/api/go-duration.ts';

export { parseDurationMs };

export const DEFAULT_STARTUP_FAILURE_THRESHOLD = 3;
export const DEFAULT_MIN_FAILING_TO_START_MS = 5 * 60 * 1000;

/** Printable statuses that mean "cannot start". */
export const START_ERROR_STATUSES: ReadonlySet<string> = new Set(['CrashLoopBackOff', 'ErrorUnschedulable', 'DataVolumeError', 'ErrorPvcNotFound', 'ErrImagePull', 'ImagePullBackOff']);

/** True when `vm` should be healed (deleted and replaced) at `now` (epoch ms). */
export function needsHealing(vm: VirtualMachine, strategy: VirtualMachinePoolAutohealingStrategy, now: number): boolean {
  const threshold = strategy.startUpFailureThreshold ?? DEFAULT_STARTUP_FAILURE_THRESHOLD;
  if ((vm.status?.startFailure?.consecutiveFailCount ?? 0) >= threshold) return true;
  if (!START_ERROR_STATUSES.has(vm.status?.printableStatus ?? '')) return false;
  const minMs = (strategy.minFailingToStartDuration !== undefined ? parseDurationMs(String(strategy.minFailingToStartDuration)) : undefined) ?? DEFAULT_MIN_FAILING_TO_START_MS;
  const ready = vm.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'False') return false;
  const probed = Date.parse(String(ready.lastProbeTime ?? ''));
  return !Number.isNaN(probed) && now - probed >= minMs;
}

/** The candidates among `vms`. */
export function healingCandidates(vms: readonly VirtualMachine[], strategy: VirtualMachinePoolAutohealingStrategy, now: number): VirtualMachine[] {
  return vms.filter((vm) => needsHealing(vm, strategy, now));
}
