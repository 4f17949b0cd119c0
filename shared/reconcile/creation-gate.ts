/**
 * The expectations gate of a controller whose creates are observed by their own answers (the
 * evacuation controller and the workload updater read the API, not a lagging cache, so each
 * create's answer lowers the record at once). An unsatisfied record therefore means a pass died
 * between the record and its creates. KubeVirt's in-memory record dies with its process; this one
 * is durable, so the key waits until the record expires (5 minutes, as upstream) — or, when the
 * caller knows no pass can still be alive after `takeoverMs` (the function timeout), until then —
 * and asks to be looked at again at that moment rather than waiting for an unrelated event.
 */
import { EXPECTATIONS_TIMEOUT_MS, isExpectationSatisfied, type Expectations } from '../state/port.ts';
import { requeueAfter, type Outcome } from './outcome.ts';

export interface CreationGateDeps {
  readonly expectations: Expectations;
  /** Epoch ms on the controller's clock. */
  readonly now: () => number;
  /** Simulated ms per wall-clock ms of `now`; the queue's timers run on the wall clock. */
  readonly clockSpeed?: number | undefined;
  /** After how long (ms of `now`) an unsatisfied record is a dead pass's and is dropped; at most, and by default, the 5-minute expiry. */
  readonly takeoverMs?: number | undefined;
}

/** undefined: go on (no record, satisfied, expired or taken over); otherwise the requeue to return. */
export async function creationGate(deps: CreationGateDeps, scope: string, key: string, why: string): Promise<Outcome | undefined> {
  const record = await deps.expectations.get(scope, key);
  const now = deps.now();
  if (!record || isExpectationSatisfied(record, now)) return undefined;
  const takeoverMs = Math.min(deps.takeoverMs ?? EXPECTATIONS_TIMEOUT_MS, EXPECTATIONS_TIMEOUT_MS);
  if (now - record.setAt >= takeoverMs) {
    await deps.expectations.delete(scope, key);
    return undefined;
  }
  return requeueAfter(Math.max(1, (record.setAt + takeoverMs - now) / 1000) / (deps.clockSpeed ?? 1), why);
}
