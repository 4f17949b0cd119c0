/** What the diagnose verdict tests share: a fixed "now" and a trace entry to vary. */
import type { TraceEntry } from '../../shared/state/traces.ts';

export const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);

/** A VMI reconcile of `default/x` a minute ago that ended `done`; `over` changes any field. */
export function trace(over: Partial<TraceEntry> = {}): TraceEntry {
  return {
    controller: 'vmi',
    key: 'default/x',
    cause: { kind: 'VirtualMachineInstance', namespace: 'default', name: 'x', resourceVersion: '10', event: 'MODIFIED', seenAt: NOW - 60_000 },
    enqueuedAt: NOW - 60_000,
    receivedAt: NOW - 59_000,
    attempt: 1,
    coalesced: 1,
    outcome: { kind: 'done' },
    reads: 2,
    writes: [],
    durationMs: 20,
    ...over,
  };
}
