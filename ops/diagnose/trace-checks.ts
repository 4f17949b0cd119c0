/**
 * What a controller's recent traces say about an object, whatever its kind (symptom 3 of the
 * seed: "the pod exists but the status is off"): writes to it that keep hitting conflicts,
 * reconciles that keep waiting on expectations, and a relay that has not delivered the object's
 * current resourceVersion. Pure.
 */
import type { TraceEntry } from '../../shared/state/traces.ts';
import { outcomeText } from '../trace/timeline.ts';
import { humanSeconds, problem, type Finding } from './finding.ts';

/** How far back "recent" conflicts and expectation waits are counted. */
export const RECENT_MS = 5 * 60 * 1000;
/** This many conflicts (or expectation waits) in {@link RECENT_MS} is a problem; fewer is normal optimistic concurrency. */
export const REPEATED = 3;
/** The relay is late when the object's current resourceVersion has not reached a reconcile for this long. */
export const RELAY_LAG_MS = 10_000;

/** The object the traces are read about. */
export interface TracedObject {
  /** `VirtualMachineInstance`, as the relay names the cause's kind. */
  readonly kind: string;
  /** `VMI`, `VM`, `migration`: how the verdicts name it. */
  readonly label: string;
  /** Plural resource its writes go to (`virtualmachineinstances`, `/status` writes included). */
  readonly resource: string;
  readonly name: string;
  readonly resourceVersion: string;
}

/** "last reconcile 12 s ago, attempt 1, caused by Pod x MODIFIED: done". */
export function traceLine(t: TraceEntry, now: number): string {
  return `last reconcile ${humanSeconds((now - t.receivedAt) / 1000)} ago, attempt ${t.attempt}, caused by ${t.cause.kind} ${t.cause.name} ${t.cause.event}: ${outcomeText(t.outcome)}`;
}

/** Conflicts, expectation waits and relay lag (see the module comment). */
export function traceFindings(traces: readonly TraceEntry[], obj: TracedObject, now: number): Finding[] {
  const out: Finding[] = [];
  const recent = traces.filter((t) => now - t.receivedAt <= RECENT_MS);
  const conflicted = recent.flatMap((t) => t.writes.filter((w) => w.code === 409 && w.resource.split('/')[0] === obj.resource && w.name === obj.name).map((w) => ({ t, w })));
  if (conflicted.length >= REPEATED) {
    const status = conflicted.every(({ w }) => w.verb !== 'create' && w.verb !== 'delete');
    const verbs = [...new Set(conflicted.map(({ w }) => `${w.verb} ${w.resource}`))].join(', ');
    out.push(
      problem(
        'write-conflicts',
        `${status ? 'status writes' : 'writes'} for this ${obj.label} got ${conflicted.length} conflicts in the last ${humanSeconds(RECENT_MS / 1000)}`,
        [`${verbs} answered 409: another writer changed the ${obj.label} between the controller's read and its write`, `last at ${new Date(conflicted.at(-1)!.t.receivedAt).toISOString()}; ${traceLine(conflicted.at(-1)!.t, now)}`],
        'find the other writer (kubectl get --show-managed-fields, the API server audit log); each conflict costs a retry',
      ),
    );
  }
  const waits = recent.filter((t) => t.outcome.kind === 'requeue' && /expectation/i.test(t.outcome.why));
  if (waits.length >= REPEATED) {
    out.push(problem('expectation-retries', `${waits.length} reconciles waited on expectations in the last ${humanSeconds(RECENT_MS / 1000)}`, [traceLine(waits.at(-1)!, now)]));
  }
  const lag = relayLag(traces, obj, now);
  if (lag) out.push(lag);
  return out;
}

/** The newest event for the object that reached a reconcile is older than its current resourceVersion. */
function relayLag(traces: readonly TraceEntry[], obj: TracedObject, now: number): Finding | undefined {
  const numeric = /^\d+$/;
  const last = traces.filter((t) => t.cause.kind === obj.kind && t.cause.name === obj.name && numeric.test(t.cause.resourceVersion)).at(-1);
  if (!last || !numeric.test(obj.resourceVersion)) return undefined;
  if (BigInt(obj.resourceVersion) <= BigInt(last.cause.resourceVersion)) return undefined;
  // A change just made is on its way: only a gap that has lasted counts.
  const newest = Math.max(...traces.map((t) => t.receivedAt + t.durationMs));
  if (now - newest < RELAY_LAG_MS) return undefined;
  return problem(
    'relay-lag',
    `the relay's last event for this ${obj.label} (resourceVersion ${last.cause.resourceVersion}, seen ${humanSeconds((now - last.cause.seenAt) / 1000)} ago) is older than its current resourceVersion ${obj.resourceVersion}`,
    [`no reconcile since ${new Date(newest).toISOString()}: the relay (or the queue) has not delivered the change`],
    'check the relay: its watch may be stuck (its log, its restarts); virt-reconciler queues shows whether keys wait in the queue',
  );
}
