/**
 * Sweeps: periodic work that no event triggers, the serverless way (docs/controllers.md
 * "Sweeps"). KubeVirt re-adds every node's key once a minute from memory; a function has no
 * memory, and a schedule (EventBridge Scheduler on AWS, the local runtime's timer) cannot name the
 * nodes. So the schedule names the **sweep** — one message with the controller's {@link SWEEP_KEY}
 * — and the controller expands it: one LIST of its registry entry's `sweep.lists`, one key per
 * object, sent to its own queue, where per-key FIFO order, deduplication and coalescing apply as
 * to any event. The expansion is the same code on Lambda and locally (shared/reconcile/instrument.ts
 * runs it in place of the reconcile when the sweep key arrives).
 *
 * On AWS the schedule writes a timer to the controller's timer queue ({@link sweepTimerBody}): the
 * timer forwarder validates it and forwards it to the FIFO queue with a deduplication id per
 * scheduled instant, so a schedule invocation delivered twice sweeps once.
 */
import { controllerInfo, type SweepInfo } from '../controllers.ts';
import { InvalidInputError } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../metrics/log.ts';
import { keyOf, SWEEP_EVENT, SWEEP_KEY, type Cause, type Controller, type KeyMessage } from '../queue/message.ts';
import type { KeyQueue } from '../queue/port.ts';
import { done, type Outcome } from './outcome.ts';

/** EventBridge Scheduler's context attribute for the instant a schedule fired (ISO 8601). */
export const SCHEDULED_TIME = '<aws.scheduler.scheduled-time>';

/** The sweep of `controller` due at `at` (epoch ms on the controller's clock). */
export function sweepMessage(controller: Controller, at: number): KeyMessage {
  return { v: 1, controller, key: SWEEP_KEY, cause: { kind: 'Sweep', namespace: '', name: controller, uid: '', resourceVersion: '', event: SWEEP_EVENT, seenAt: at } };
}

/**
 * The body EventBridge Scheduler sends to `controller`'s timer queue: a timer
 * (shared/queue/timer-forwarder.ts `TimerBody`) due at the scheduled time, which Scheduler writes
 * in place of {@link SCHEDULED_TIME}; the forwarder stamps the sweep with that instant.
 */
export function sweepTimerBody(controller: Controller): string {
  return JSON.stringify({ v: 1, fireAt: SCHEDULED_TIME, message: sweepMessage(controller, 0) });
}

/** What a sweep reads of a listed object. */
export interface SweptObject {
  readonly metadata?: { readonly namespace?: string | undefined; readonly name?: string | undefined; readonly uid?: string | undefined } | undefined;
}

/** The keys one sweep sends for what it listed (see SweepInfo.keys). */
export function sweepKeys(sweep: Pick<SweepInfo, 'keys'>, items: readonly SweptObject[]): string[] {
  const named = items.filter((o) => o.metadata?.name);
  if (sweep.keys === 'only' && named.length !== 1) return [];
  return named.map((o) => keyOf(o.metadata?.namespace, o.metadata!.name!));
}

/**
 * One message per swept object, caused by the sweep at `at`: a quorum read (no resourceVersion),
 * and a deduplication id per object and sweep (shared/queue/message.ts `dedupId`), so a sweep
 * delivered twice sends each key once while the next sweep sends it again.
 */
export function expandSweep(controller: Controller, sweep: SweepInfo, items: readonly SweptObject[], at: number): KeyMessage[] {
  const byKey = new Map(items.map((o) => [keyOf(o.metadata?.namespace, o.metadata?.name ?? ''), o]));
  return sweepKeys(sweep, items).map((key) => {
    const o = byKey.get(key)?.metadata;
    const cause: Cause = { kind: sweep.lists.kind, namespace: o?.namespace ?? '', name: o?.name ?? '', uid: o?.uid ?? '', resourceVersion: '', event: SWEEP_EVENT, seenAt: at };
    return { v: 1, controller, key, cause };
  });
}

export interface SweepDeps {
  /** One LIST per sweep (counted against the controller's API budget like any call). */
  readonly kube: Pick<KubeClient, 'list'>;
  /** The controller's own queue. Absent: the runtime cannot sweep, and says so. */
  readonly queue: Pick<KeyQueue, 'send'> | undefined;
  readonly log: Pick<Logger, 'info'>;
}

/**
 * Expands the sweep `message` of `controller`: lists, sends the keys, and is done. A failed list
 * or send throws (the sweep is retried with backoff; the keys already sent are deduplicated).
 */
export async function runSweep(controller: Controller, message: KeyMessage, deps: SweepDeps): Promise<Outcome> {
  const sweep = controllerInfo(controller).sweep;
  if (!sweep) throw new InvalidInputError('key', `${SWEEP_KEY}: controller ${controller} has no sweep`, 'MalformedMessage');
  if (!deps.queue) throw new InvalidInputError('key', `${SWEEP_KEY}: this runtime gives controller ${controller} no queue to sweep into`, 'NoSweepQueue');
  const listed = await deps.kube.list(sweep.lists, undefined);
  const messages = expandSweep(controller, sweep, listed.items as readonly SweptObject[], message.cause.seenAt);
  if (messages.length > 0) await deps.queue.send(messages);
  deps.log.info('swept', { controller, listed: listed.items.length, keys: messages.length, at: message.cause.seenAt });
  return done;
}
