/**
 * The timeline `virt-reconciler trace` prints and the dashboard shows: for each reconcile of
 * every key in the chain, in time order, the event that caused it, the message (enqueued,
 * received, attempt, coalesced), the reconcile (duration, reads, outcome) and its API writes in
 * the order they were made. Pure: built from trace entries (shared/state/traces.ts).
 */
import type { TraceEntry, TraceOutcome } from '../../shared/state/traces.ts';

/** What a timeline row is about. */
export type StepKind = 'event' | 'message' | 'reconcile' | 'write';

/** One row. */
export interface TimelineStep {
  /** Epoch ms; writes carry their reconcile's start (a write has no time of its own in the trace). */
  readonly at: number;
  readonly controller: string;
  readonly key: string;
  readonly step: StepKind;
  readonly text: string;
}

/** "done", "requeue after 30 s (why)", "retry (Conflict: …)", "dead-lettered (reason: …)". */
export function outcomeText(o: TraceOutcome): string {
  switch (o.kind) {
    case 'done':
      return 'done';
    case 'requeue':
      return `requeue after ${o.afterSeconds} s (${o.why})`;
    case 'retry':
      return `retry (${o.reason}: ${o.message})`;
    case 'dead-lettered':
      return `dead-lettered (${o.reason}: ${o.message})`;
  }
}

/** Entries of several keys, oldest reconcile first (ties: controller, then key, for a stable order). */
export function byTime(entries: readonly TraceEntry[]): TraceEntry[] {
  return [...entries].sort((a, b) => a.receivedAt - b.receivedAt || a.controller.localeCompare(b.controller) || a.key.localeCompare(b.key));
}

/** The rows for `entries` (any order in, time order out). */
export function timeline(entries: readonly TraceEntry[]): TimelineStep[] {
  const out: TimelineStep[] = [];
  // A retry of the same event is not a new event: its event row is not repeated.
  const lastCause = new Map<string, string>();
  for (const e of byTime(entries)) {
    const row = (at: number, step: StepKind, text: string) => out.push({ at, controller: e.controller, key: e.key, step, text });
    const c = e.cause;
    const causeId = `${c.kind}/${c.namespace}/${c.name}@${c.resourceVersion}/${c.event}`;
    const id = `${e.controller} ${e.key}`;
    if (lastCause.get(id) !== causeId) {
      const rv = c.resourceVersion ? ` (resourceVersion ${c.resourceVersion})` : '';
      row(c.seenAt, 'event', `${c.event} ${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}${rv}`);
      lastCause.set(id, causeId);
    }
    const waited = Math.max(0, e.receivedAt - e.enqueuedAt);
    const merged = e.coalesced > 1 ? `, ${e.coalesced} messages coalesced` : '';
    row(e.enqueuedAt, 'message', `enqueued; received ${waited} ms later, attempt ${e.attempt}${merged}`);
    const writes = e.writes.length === 0 ? 'no writes' : `${e.writes.length} write${e.writes.length === 1 ? '' : 's'}`;
    row(e.receivedAt, 'reconcile', `${Math.round(e.durationMs)} ms, ${e.reads} read${e.reads === 1 ? '' : 's'}, ${writes} → ${outcomeText(e.outcome)}`);
    for (const w of e.writes) {
      row(e.receivedAt, 'write', `${w.verb} ${w.resource} ${w.namespace ? `${w.namespace}/` : ''}${w.name} → ${w.code === 0 ? 'no answer' : w.code}`);
    }
  }
  return out;
}
