/**
 * Periodic work the serverless way: a reconcile that must look at its key again every `period`
 * (the node controller's one-minute re-check, the workload updater's re-run) returns a
 * requeue-after, which is a durable timer (SQS timer queue on AWS, the SQLite timer table
 * locally) — never a function that sleeps.
 *
 * Event-driven passes of the same key would each start one more timer chain (on AWS a timer is a
 * message, and messages do not merge), so the chain is armed through a lease in the state table:
 * only a pass that finds no live lease arms the next timer. The timer's own pass finds the lease
 * just expired and re-arms it; a lost timer is re-armed by the next event after the lease ends.
 * This is what client-go's delaying queue gives KubeVirt for free (one pending AddAfter per key).
 */
import type { Leases } from '../state/port.ts';
import { done, requeueAfter, type Outcome } from './outcome.ts';

export interface PeriodicDeps {
  readonly leases: Leases;
  /** Epoch ms on the controller's clock (the sandbox's, sped up, in tests). */
  readonly now: () => number;
  /** Simulated ms per wall-clock ms of `now`; the queue's timers run on the wall clock. */
  readonly clockSpeed?: number | undefined;
}

/** How early the timer's own pass may come and still re-arm (SQS fires up to a second early). */
const EARLY_FIRE_SLACK = 0.1;

/**
 * Arms one requeue-after of `periodSeconds` (on `now`'s clock) for `scope/key` unless one is
 * already pending; answers the outcome to return. `why` names the timer in logs and traces.
 */
export async function periodicRecheck(deps: PeriodicDeps, scope: string, key: string, periodSeconds: number, why: string): Promise<Outcome> {
  const now = deps.now();
  const ttlMs = periodSeconds * 1000 * (1 - EARLY_FIRE_SLACK);
  const armed = await deps.leases.acquire(`periodic/${scope}/${key}`, `timer-${now}`, 1, now, ttlMs);
  return armed ? requeueAfter(periodSeconds / (deps.clockSpeed ?? 1), why) : done;
}
