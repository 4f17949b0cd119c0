/**
 * The workload updater's budgets (reference node-drain-updates §3.2 steps 4–6): evictions go in
 * batches of `batchEvictionSize` (default 10) at most once per `batchEvictionInterval` (default
 * 60 s); new migrations fill what is left of `parallelMigrationsPerCluster` after the running
 * ones. The time of the last batch lives in the state table (KubeVirt keeps it in memory, so a
 * restart there allows an immediate batch; here it survives).
 */
import type { KubeVirt } from '../../shared/api/index.ts';
import { InvalidInputError } from '../../shared/errors.ts';

export const DEFAULT_BATCH_EVICTION_SIZE = 10;
export const DEFAULT_BATCH_EVICTION_INTERVAL_MS = 60_000;
/**
 * `periodicReEnqueueIntervalSeconds` = 30. Upstream passes the bare 30 as a Go duration, i.e.
 * 30 ns — a busy loop. 30 s is what the name says was meant.
 */
export const REENQUEUE_SECONDS = 30;

export interface BatchSettings {
  size: number;
  intervalMs: number;
}

/** Go duration strings as metav1.Duration writes them (`1m0s`, `90s`, `1h`, `500ms`). */
export function parseDuration(value: string, field: string): number {
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)];
  if (value === '0') return 0;
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) throw new InvalidInputError(field, `not a duration: '${value}'`);
  return parts.reduce((ms, p) => ms + Number(p[1]) * unit[p[2]!]!, 0);
}

export function batchSettingsOf(kv: KubeVirt): BatchSettings {
  const s = kv.spec?.workloadUpdateStrategy ?? {};
  const interval = s.batchEvictionInterval;
  return {
    // A negative size crashes KubeVirt (slice bound); here it evicts nothing.
    size: Math.max(0, s.batchEvictionSize ?? DEFAULT_BATCH_EVICTION_SIZE),
    intervalMs: interval === undefined ? DEFAULT_BATCH_EVICTION_INTERVAL_MS : parseDuration(String(interval), 'spec.workloadUpdateStrategy.batchEvictionInterval'),
  };
}

export interface EvictionBatch {
  count: number;
  /** The new lastDeletionBatch (ms), or undefined when no batch starts now. */
  startedAtMs: number | undefined;
}

/** A batch starts when the interval has passed since the last one and there is something to evict; size 0 still starts one. */
export function evictionBatch(evictable: number, lastBatchMs: number | undefined, settings: BatchSettings, nowMs: number): EvictionBatch {
  if (evictable === 0 || nowMs <= (lastBatchMs ?? -Infinity) + settings.intervalMs) return { count: 0, startedAtMs: undefined };
  return { count: Math.min(settings.size, evictable), startedAtMs: nowMs };
}

/** New migrations this pass: what the running ones leave of the cluster budget. */
export function migrationCount(migratable: number, activeMigrations: number, perCluster: number): number {
  return Math.min(Math.max(0, perCluster - activeMigrations), migratable);
}

/** Seconds until the next batch may start (for the durable timer), at least 1. */
export function secondsUntilNextBatch(lastBatchMs: number, settings: BatchSettings, nowMs: number): number {
  return Math.max(1, Math.ceil((lastBatchMs + settings.intervalMs - nowMs) / 1000));
}
