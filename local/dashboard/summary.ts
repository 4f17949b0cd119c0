/**
 * What the local dashboard shows, as plain data: queue depth per controller now and over time,
 * reconcile rate and latency from the metrics registry, VMIs by phase, recent errors. The same
 * figures as `virt-reconciler queues` and the CloudWatch dashboard (docs/operations.md).
 */
import type { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { workqueueDepth } from '../../shared/metrics/kubevirt/workqueue.ts';
import { CONTROLLERS, type Controller } from '../../shared/queue/message.ts';
import type { KeyQueue, QueueDepth } from '../../shared/queue/port.ts';
import type { RecentError } from './recent-errors.ts';

/** What the dashboard reads from the runtime (a LocalRuntime satisfies it). */
export interface DashboardSource {
  readonly queue: Pick<KeyQueue, 'depth' | 'listDeadLetters' | 'replay'>;
  readonly metrics: MetricsRegistry;
}

/** One point of the depth chart. */
export interface DepthSample {
  /** Epoch ms. */
  readonly t: number;
  /** Keys waiting or being worked on per controller: visible + in flight + delayed. */
  readonly depth: Readonly<Record<Controller, number>>;
  /** reconcile_total at that time (for the rate). */
  readonly reconciles: number;
}

export interface Summary {
  readonly at: number;
  readonly queues: readonly QueueDepth[];
  readonly history: readonly DepthSample[];
  readonly reconcile: {
    readonly total: number;
    readonly byResult: Readonly<Record<string, number>>;
    /** Reconciles per second over the last {@link RATE_WINDOW_MS} (0 before two samples). */
    readonly perSecond: number;
    /** reconcile_time_seconds, since start; bucket upper bounds, null before the first reconcile. */
    readonly p50Seconds: number | null;
    readonly p99Seconds: number | null;
    /** workqueue_queue_duration_seconds, since start. */
    readonly queueWaitP50Seconds: number | null;
    readonly queueWaitP99Seconds: number | null;
    readonly retries: number;
  };
  /** VMIs by status.phase ('' = no phase yet); null when the cluster could not be read. */
  readonly phases: Readonly<Record<string, number>> | null;
  readonly phasesError?: string;
  readonly errors: readonly RecentError[];
  readonly errorsTotal: number;
}

const RESULTS = ['done', 'requeued', 'retrying', 'dead-lettered'] as const;
export const RATE_WINDOW_MS = 10_000;

/** Queue depth of every controller, right now. */
export async function depths(source: DashboardSource): Promise<QueueDepth[]> {
  return Promise.all(CONTROLLERS.map((c) => source.queue.depth(c)));
}

/** A chart point from current depths; also publishes them as `workqueue_depth{name}` for /metrics. */
export function sample(source: DashboardSource, all: readonly QueueDepth[], now: number): DepthSample {
  const depth = Object.fromEntries(CONTROLLERS.map((c) => [c, 0])) as Record<Controller, number>;
  for (const d of all) {
    depth[d.controller] = d.visible + d.inFlight + d.delayed;
    source.metrics.set('workqueue_depth', 'Keys waiting or in flight per controller queue', { name: d.controller }, depth[d.controller]);
    source.metrics.set('workqueue_dead_letters', 'Dead-lettered keys per controller', { name: d.controller }, d.deadLettered);
    workqueueDepth(source.metrics, d.controller, depth[d.controller]);
  }
  return { t: now, depth, reconciles: source.metrics.total('reconcile_total') };
}

/** Reconciles per second between the newest sample and the oldest one inside the window. */
export function ratePerSecond(history: readonly DepthSample[]): number {
  const last = history.at(-1);
  if (last === undefined) return 0;
  const first = history.find((s) => last.t - s.t <= RATE_WINDOW_MS) ?? last;
  const dt = (last.t - first.t) / 1000;
  return dt <= 0 ? 0 : Math.max(0, last.reconciles - first.reconciles) / dt;
}

/** The whole summary served at /api/summary. */
export function summarize(input: {
  source: DashboardSource;
  queues: readonly QueueDepth[];
  history: readonly DepthSample[];
  phases: Record<string, number> | Error;
  errors: readonly RecentError[];
  errorsTotal: number;
  now: number;
}): Summary {
  const m = input.source.metrics;
  const q = (name: string, p: number): number | null => m.quantile(name, p) ?? null;
  return {
    at: input.now,
    queues: input.queues,
    history: input.history,
    reconcile: {
      total: m.total('reconcile_total'),
      byResult: Object.fromEntries(RESULTS.map((r) => [r, m.total('reconcile_total', { result: r })])),
      perSecond: ratePerSecond(input.history),
      p50Seconds: q('reconcile_time_seconds', 0.5),
      p99Seconds: q('reconcile_time_seconds', 0.99),
      queueWaitP50Seconds: q('workqueue_queue_duration_seconds', 0.5),
      queueWaitP99Seconds: q('workqueue_queue_duration_seconds', 0.99),
      retries: m.total('workqueue_retries_total'),
    },
    phases: input.phases instanceof Error ? null : input.phases,
    ...(input.phases instanceof Error ? { phasesError: input.phases.message } : {}),
    errors: input.errors,
    errorsTotal: input.errorsTotal,
  };
}
