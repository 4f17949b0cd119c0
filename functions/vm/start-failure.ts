/**
 * Start-failure backoff, KubeVirt's crash-loop guard (reference.md §c.3): a VMI that ends without
 * ever reaching Running counts as a failed start; the next start waits `interval × count²`
 * seconds plus jitter, at most 300 s. While it waits the VM shows `CrashLoopBackOff`.
 */
import type { VirtualMachineInstance, VirtualMachineStartFailure } from '../../shared/api/index.ts';
import { isFinal } from './run-strategy.ts';
import type { RunStrategy } from './well-known.ts';

/** KubeVirt's default `maxDelay` for start backoff, seconds. */
export const START_BACKOFF_MAX_SECONDS = 300;
const MIN_INTERVAL_SECONDS = 10;

/**
 * Seconds before retry number `count` may start: `max(maxDelay/30, 10) × count²`, plus jitter in
 * [0, delay/2) so that many VMs failing together do not retry together, capped at `maxDelay`.
 * `random` ∈ [0, 1) comes in as a parameter to keep this pure.
 */
export function startBackoffSeconds(count: number, random: number, maxDelay = START_BACKOFF_MAX_SECONDS): number {
  const interval = Math.max(Math.floor(maxDelay / 30), MIN_INTERVAL_SECONDS);
  const delay = Math.min(interval * count * count, maxDelay);
  return Math.min(delay + Math.floor(random * (delay / 2)), maxDelay);
}

/** Seconds left until `retryAfterTimestamp` (≤ 0 when none or already past). */
export function backoffSecondsLeft(startFailure: VirtualMachineStartFailure | undefined, now: number): number {
  const at = startFailure?.retryAfterTimestamp;
  if (!at) return 0;
  return Math.ceil((Date.parse(at) - now) / 1000);
}

function everRan(vmi: VirtualMachineInstance): boolean {
  return (vmi.status?.phaseTransitionTimestamps ?? []).some((t) => t.phase === 'Running');
}

/**
 * The VM's next `status.startFailure`: cleared once a VMI runs or the strategy does not restart;
 * incremented once per failed VMI (keyed by its UID, so re-reading the same final VMI does not
 * count it twice).
 */
export function nextStartFailure(
  current: VirtualMachineStartFailure | undefined,
  strategy: RunStrategy | undefined,
  vmi: VirtualMachineInstance | undefined,
  now: number,
  random: number,
): VirtualMachineStartFailure | undefined {
  if (strategy !== 'Always' && strategy !== 'RerunOnFailure' && strategy !== 'Once') return undefined;
  if (!vmi) return current;
  if (vmi.status?.phase === 'Running' || everRan(vmi)) return undefined;
  if (!isFinal(vmi)) return current;
  const uid = vmi.metadata?.uid;
  if (current?.lastFailedVMIUID === uid) return current;
  const count = (current?.consecutiveFailCount ?? 0) + 1;
  const retryAt = new Date(now + startBackoffSeconds(count, random) * 1000).toISOString();
  return { ...(uid ? { lastFailedVMIUID: uid } : {}), consecutiveFailCount: count, retryAfterTimestamp: retryAt };
}
