/**
 * The snapshot's time rules (reference §1.2): progressing until Failed or Succeeded; the failure
 * deadline (default 5m, "0s" = none) counts from creation; a missed deadline makes the snapshot
 * terminating like a deletion does; Retain keeps only a ready content.
 */
import { DEFAULT_FAILURE_DEADLINE_MS } from './names.ts';
import type { VirtualMachineSnapshot, VirtualMachineSnapshotContent } from '../../shared/api/snapshot.ts';

/** A Kubernetes `metav1.Duration` as JSON ("5m0s", "1h", "30s", "0s") → ms; undefined when malformed. */
export function durationMs(value: string): number | undefined {
  let total = 0;
  let matched = '';
  for (const m of value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) {
    matched += m[0];
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3_600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : m[2] === 'ms' ? n : 0;
  }
  return matched === value && value !== '' ? total : undefined;
}

export const isProgressing = (s: VirtualMachineSnapshot) => s.status?.phase !== 'Failed' && s.status?.phase !== 'Succeeded';

export function failureDeadlineMs(s: VirtualMachineSnapshot): number {
  const d = s.spec?.failureDeadline;
  if (d === undefined) return DEFAULT_FAILURE_DEADLINE_MS;
  return durationMs(d) ?? DEFAULT_FAILURE_DEADLINE_MS;
}

/** ms until the deadline (negative once missed); 0 when there is no deadline. */
export function timeUntilDeadlineMs(s: VirtualMachineSnapshot, nowMs: number): number {
  const deadline = failureDeadlineMs(s);
  if (deadline === 0) return 0;
  return Date.parse(s.metadata?.creationTimestamp ?? '') + deadline - nowMs;
}

export function deadlineExceeded(s: VirtualMachineSnapshot, nowMs: number): boolean {
  if (s.status?.phase === 'Failed') return true;
  return isProgressing(s) && timeUntilDeadlineMs(s, nowMs) < 0;
}

export const isTerminating = (s: VirtualMachineSnapshot, nowMs: number) => s.metadata?.deletionTimestamp !== undefined || deadlineExceeded(s, nowMs);

export function shouldDeleteContent(s: VirtualMachineSnapshot, content: VirtualMachineSnapshotContent | undefined): boolean {
  const policy = s.spec?.deletionPolicy;
  return policy === undefined || policy === 'Delete' || content?.status?.readyToUse !== true;
}
