/**
 * Wraps a controller's reconcile with what every delivery needs, the same on Lambda and locally:
 * a per-reconcile API call counter, "not older than" reads from the message's cause, timing,
 * metrics with client-go / controller-runtime names, one structured log line per reconcile, and
 * one trace entry per reconcile in the state table (issue 18) — no per-controller code. The
 * controller's sweep key (shared/reconcile/sweep.ts) is expanded here instead of reconciled, with
 * the same counting, logging and tracing.
 */
import type { KubeClient } from '../kube/client.ts';
import { ApiCallCounter, countingKubeClient } from '../kube/call-counter.ts';
import type { Logger } from '../metrics/log.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import { VMI_SYNC } from '../metrics/kubevirt/catalog.ts';
import { addMetric } from '../metrics/kubevirt/record.ts';
import { restClientMetrics } from '../metrics/kubevirt/rest-client.ts';
import { workqueueReconcile } from '../metrics/kubevirt/workqueue.ts';
import type { ApiWrite } from '../kube/api-write.ts';
import { isSweepKey, type Cause, type Controller } from '../queue/message.ts';
import { DEFAULT_RETRY, type KeyQueue, type ReceivedKey, type RetryPolicy } from '../queue/port.ts';
import type { TraceBuffer, TraceEntry, Traces } from '../state/traces.ts';
import { errorText, reasonOf } from '../errors.ts';
import { requeueAfter, type Outcome, type Reconcile, type ReconcileContext } from './outcome.ts';
import { runSweep } from './sweep.ts';
import { traceEntryOf } from './trace-entry.ts';
import { viewKubeClient, type ViewTally } from './view-client.ts';
import { readFence, recordFence, type WriteFence } from './write-fence.ts';
import type { Expectations } from '../state/port.ts';
import { FencedError, fencedKubeClient, shadowKubeClient, type ShadowWrite } from '../kube/guarded-writes.ts';
import { DEFAULT_LEASE_CACHE_MS, type WriteMode } from '../cutover/gate.ts';
import { runShadowed } from '../cutover/shadow-state.ts';
import { AlreadyExistsError, KubeTransientError } from '../kube/errors.ts';
import { isWorkerCrash } from './worker-crash.ts';

export interface ControllerSpec<D> {
  readonly controller: Controller;
  readonly reconcile: Reconcile<D>;
  /** The controller's deps, built around the (counting) Kubernetes client of one reconcile. */
  readonly deps: (kube: KubeClient) => D;
  /** Its messages carry views (ControllerWakes.view): its passes keep a write fence (write-fence.ts). */
  readonly viewed?: boolean;
}

export interface InstrumentOptions {
  readonly kube: KubeClient;
  readonly metrics: MetricsRegistry;
  readonly log: Logger;
  readonly now?: () => number;
  /** Where each reconcile's trace entry goes; without it, none is recorded. */
  readonly traces?: Traces;
  /** The queue's retry policy (default DEFAULT_RETRY), to tell a last failed attempt from a retry. */
  readonly retry?: Pick<RetryPolicy, 'maxAttempts' | 'deadLetterAfterMs'>;
  /** The controller's queue, where a sweep sends the keys it lists; without it a sweep is refused. */
  readonly queue?: Pick<KeyQueue, 'send'>;
  /** The API server's URL, the `host` of KubeVirt's REST client metrics (`none` without it). */
  readonly apiServer?: string;
  /** Where a viewed controller's write fences live (the state table's expectations); without it views are not used. */
  readonly fences?: Pick<Expectations, 'get' | 'expectDeletions'>;
  /** The cutover's fence and shadow mode (docs/cutover.md); without it every write is sent. */
  readonly cutover?: CutoverHooks;
}

/** What a reconcile needs of the cutover: may it write, and where a shadow write goes. */
export interface CutoverHooks {
  /** Asked before each reconcile and each write (a cached read of virt-controller's Lease). */
  mode(): Promise<WriteMode>;
  /** The controller's client with `dryRun: true`, for shadow writes. */
  readonly dryRun: KubeClient;
  /** Takes each shadow write of a reconcile (awaited: on AWS it is sent to the relay's judge, shared/cutover/shadow-channel.ts). */
  record(controller: string, key: string, w: ShadowWrite): void | Promise<void>;
  /** A shadow reconcile begun at `startedAt` (epoch ms, wall clock) decided all it would write (shared/cutover/shadow-recorder.ts `settled`). */
  settled?(controller: string, key: string, startedAt: number): void | Promise<void>;
}

/** Buckets for API calls per reconcile. */
const CALL_BUCKETS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 50];

/**
 * A `(ReceivedKey) → Outcome` function for the queue's workers (or the Lambda batch handler).
 * `traces`, when given, takes this reconcile's entry instead of `opts.traces` (the invocation's
 * {@link TraceBuffer}, written once for the batch).
 */
export function instrumented<D>(spec: ControllerSpec<D>, opts: InstrumentOptions): (rk: ReceivedKey, traces?: Traces) => Promise<Outcome> {
  const now = opts.now ?? Date.now;
  const { controller } = spec;
  // KubeVirt's REST client metrics count every call, whichever reconcile makes it.
  const restKube = restClientMetrics(opts.kube, opts.metrics, opts.apiServer ?? '');
  return async (rk, batchTraces) => {
    const traces = batchTraces ?? opts.traces;
    const counter = new ApiCallCounter();
    const started = now();
    const cause = rk.message.cause;
    opts.metrics.observe('workqueue_queue_duration_seconds', 'How long a key waited in the queue', { name: controller }, Math.max(0, started - rk.enqueuedAt) / 1000);
    const work = workqueueReconcile(opts.metrics, controller, started - rk.enqueuedAt, now);
    const fields = { controller, key: rk.message.key, uid: cause.uid, resourceVersion: cause.resourceVersion, attempt: rk.attempt, cause: `${cause.kind}/${cause.event}` };
    let result: { outcome: Outcome } | { error: unknown } | undefined;
    // The message's view answers the reads of a first attempt only (a retry follows a failure that
    // may have come from acting on it, and reads anew), checked against the key's write fence.
    const tally: ViewTally = { hits: 0, misses: 0 };
    let fences = spec.viewed && !isSweepKey(rk.message.key) ? opts.fences : undefined;
    const fenceKey = `${controller}/${rk.message.key}`;
    let fence: WriteFence | undefined;
    try {
      const mode = opts.cutover ? await opts.cutover.mode() : 'write';
      if (mode === 'overdue') {
        // Our own renewal is late: the key is still ours, so it waits for the renewal instead of being dropped.
        result = { outcome: overdue(opts.metrics, controller) };
        return result.outcome;
      }
      if (mode === 'fenced') {
        // Another controller holds virt-controller's Lease: this key is its to act on. When the
        // Lease becomes ours the relay re-sends every key (a relist), so nothing is lost.
        opts.metrics.inc('fenced_reconciles_total', 'Reconciles skipped: virt-controller\'s Lease is held by another controller', { controller });
        result = { outcome: { kind: 'done' } };
        return result.outcome;
      }
      // Shadow writes are dry runs: they move no object, so they fence nothing.
      if (mode === 'shadow') fences = undefined;
      const race = { met: false };
      const counted = countingKubeClient(guardedClient(restKube, mode, controller, rk.message.key, opts.cutover, race), counter);
      let kube = counted;
      if (fences && rk.message.view && rk.attempt <= 1) {
        fence = await readFence(fences, fenceKey);
        kube = viewKubeClient(counted, rk.message.view, fence, tally);
      }
      const run = () =>
        isSweepKey(rk.message.key)
          ? runSweep(controller, rk.message, { kube: counted, queue: opts.queue, log: opts.log })
          : spec.reconcile(rk.message.key, spec.deps(kube), context(cause, rk.attempt));
      const shadowFrom = Date.now();
      const outcome = await fencedToDone(mode === 'shadow' ? runShadowed(run) : run(), opts.metrics, controller, opts.cutover);
      // A shadow pass that ran its course decided all it would write; one that met a race or
      // waits on its expectations decided nothing about what it left unwritten.
      if (mode === 'shadow' && !race.met && !(outcome.kind === 'requeue' && outcome.waiting)) await opts.cutover?.settled?.(controller, rk.message.key, shadowFrom);
      result = { outcome };
      opts.log.info('reconciled', { ...fields, ...(tally.hits > 0 ? { viewReads: tally.hits } : {}), outcome: outcome.kind, ...(outcome.kind === 'requeue' ? { afterSeconds: outcome.afterSeconds, why: outcome.why } : {}), ...(outcome.kind === 'terminal' ? { reason: outcome.reason } : {}), apiCalls: counter.total(), calls: counter.byCall(), ms: now() - started });
      return outcome;
    } catch (err) {
      result = { error: err };
      opts.log.warn('reconcile failed', { ...fields, reason: reasonOf(err), error: errorText(err), apiCalls: counter.total(), ms: now() - started });
      throw err;
    } finally {
      work.done();
      if (controller === 'vmi') for (const w of counter.writes()) if (isVmiSync(w)) addMetric(opts.metrics, VMI_SYNC.total, { namespace: w.namespace ?? '', name: w.name });
      const seconds = (now() - started) / 1000;
      opts.metrics.observe('reconcile_time_seconds', 'Time per reconcile', { controller }, seconds);
      opts.metrics.observe('api_calls_per_reconcile', 'Kubernetes API calls made by one reconcile', { controller }, counter.total(), CALL_BUCKETS);
      if (tally.hits > 0) opts.metrics.inc('view_reads_total', "Reads a reconcile made, by where they were answered (the message's view, or the API server)", { controller, answered: 'view' }, tally.hits);
      if (tally.misses > 0) opts.metrics.inc('view_reads_total', "Reads a reconcile made, by where they were answered (the message's view, or the API server)", { controller, answered: 'apiserver' }, tally.misses);
      for (const [call, n] of Object.entries(counter.byCall())) {
        const [verb = '', resource = ''] = call.split(' ');
        opts.metrics.inc('apiserver_requests_total', 'Kubernetes API calls made by reconciles', { controller, verb, resource }, n);
      }
      if (fences && counter.writes().length > 0 && !(result && 'error' in result && isWorkerCrash(result.error))) {
        await recordFence(fences, fenceKey, fence ?? (await readFence(fences, fenceKey)), counter.writes(), now()).catch((err: unknown) => {
          // A worker that dies here dies (the key comes back and reads anew); a table that fails is logged.
          if (isWorkerCrash(err)) throw err;
          opts.log.warn('write fence not recorded', { controller, key: rk.message.key, error: errorText(err) });
        });
      }
      // A crashed worker leaves no trace, as a real one would not.
      if (traces && result && !('error' in result && isWorkerCrash(result.error))) {
        await record(traces, opts, traceEntryOf({ controller, received: rk, result, counter, startedAt: started, durationMs: seconds * 1000, retry: opts.retry ?? DEFAULT_RETRY, failedAt: Date.now() }));
      }
    }
  };
}

/** The reconcile's client: writes fenced by the Lease, or dry-run and recorded in shadow mode. */
function guardedClient(kube: KubeClient, mode: WriteMode, controller: Controller, key: string, cutover: CutoverHooks | undefined, race: { met: boolean }): KubeClient {
  if (!cutover) return kube;
  if (mode === 'shadow') {
    // A dry run answered Conflict or AlreadyExists: the live controller wrote after our read, so
    // what this reconcile decides from then on comes from a stale view; it is not judged.
    return shadowKubeClient(kube, cutover.dryRun, (w) => {
      if (race.met) return;
      if ('error' in w.answer && isRaceError(w.answer.error)) race.met = true;
      else return cutover.record(controller, key, w);
    });
  }
  return fencedKubeClient(kube, async () => (await cutover.mode()) === 'write');
}

function isRaceError(err: unknown): boolean {
  return err instanceof AlreadyExistsError || (err instanceof KubeTransientError && err.reason === 'Conflict');
}

/**
 * A reconcile stopped by the fence mid-way ends: when the Lease was lost (or is being handed back)
 * the new holder acts on the key; when it is still ours — our renewal was late — the key comes
 * back in a second.
 */
async function fencedToDone(reconcile: Promise<Outcome>, metrics: MetricsRegistry, controller: Controller, cutover: CutoverHooks | undefined): Promise<Outcome> {
  try {
    return await reconcile;
  } catch (err) {
    if (!(err instanceof FencedError)) throw err;
    // Ours still (overdue, or renewed again since the write was refused): the key is finished later.
    const now = await cutover?.mode();
    if (now === 'overdue' || now === 'write') return overdue(metrics, controller);
    metrics.inc('fenced_reconciles_total', 'Reconciles skipped: virt-controller\'s Lease is held by another controller', { controller });
    return { kind: 'done' };
  }
}

/** How soon a key met while our Lease renewal is overdue is tried again: the fence's cache period. */
const OVERDUE_RETRY_SECONDS = DEFAULT_LEASE_CACHE_MS / 1000;

function overdue(metrics: MetricsRegistry, controller: Controller): Outcome {
  metrics.inc('overdue_reconciles_total', "Reconciles put off: virt-controller's Lease is ours but our renewal is past our renew deadline", { controller });
  return requeueAfter(OVERDUE_RETRY_SECONDS, "virt-controller's Lease renewal overdue");
}

/** KubeVirt's "VMI synced": the VMI controller's successful update or patch of a VMI (its status included). */
function isVmiSync(w: ApiWrite): boolean {
  return (w.verb === 'update' || w.verb === 'patch') && w.resource.split('/')[0] === 'virtualmachineinstances' && w.code >= 200 && w.code < 300;
}

/** One table write (or an entry into the invocation's buffer); a failure is logged and never fails the reconcile it describes. */
async function record(traces: Traces, opts: InstrumentOptions, entry: TraceEntry): Promise<void> {
  try {
    await traces.record(entry, (opts.now ?? Date.now)());
  } catch (err) {
    opts.log.warn('trace not recorded', { controller: entry.controller, key: entry.key, error: errorText(err) });
  }
}

function context(cause: Cause, attempt: number): ReconcileContext {
  return {
    ...(cause.resourceVersion ? { minResourceVersion: cause.resourceVersion } : {}),
    attempt,
    ...(cause.kind && cause.uid ? { cause: { kind: cause.kind, uid: cause.uid } } : {}),
  };
}

/** Writes an invocation's trace entries; a failure is logged with the keys it was about and never fails the batch. */
export async function flushTraces(traces: TraceBuffer, controller: string, log: Logger, now: () => number = Date.now): Promise<void> {
  await traces.flush(now(), (err, entries) =>
    log.warn('traces not recorded', { controller, keys: entries.map((e) => e.key), error: errorText(err) }),
  );
}
