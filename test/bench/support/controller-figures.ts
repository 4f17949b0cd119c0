/**
 * What each controller's reconciles did so far, from the system's metrics registry: API calls
 * (all, and by verb and resource), reconciles. The benches take it before and after a run and
 * report the difference per VMI ({@link perVmi}).
 */
import type { MetricsRegistry } from '../../../shared/metrics/registry.ts';

export interface ControllerFigures {
  /** API calls by controller. */
  readonly calls: Record<string, number>;
  /** API calls by `controller verb resource`. */
  readonly callsByVerb: Record<string, number>;
  /** Reconciles by controller. */
  readonly reconciles: Record<string, number>;
}

export function controllerFigures(metrics: MetricsRegistry): ControllerFigures {
  const calls: Record<string, number> = {};
  const callsByVerb: Record<string, number> = {};
  for (const s of metrics.series('apiserver_requests_total')) {
    const c = s.labels.controller ?? '';
    calls[c] = (calls[c] ?? 0) + s.value;
    const k = `${c} ${s.labels.verb} ${s.labels.resource}`;
    callsByVerb[k] = (callsByVerb[k] ?? 0) + s.value;
  }
  const reconciles: Record<string, number> = {};
  for (const s of metrics.series('reconcile_time_seconds')) reconciles[s.labels.controller ?? ''] = (reconciles[s.labels.controller ?? ''] ?? 0) + s.value;
  return { calls, callsByVerb, reconciles };
}

/** `after − before` per VMI, rounded, zeros left out, largest first; at most `top` entries. */
export function perVmi(after: Record<string, number>, before: Record<string, number>, n: number, top = Infinity): Record<string, number> {
  const rows = Object.entries(after)
    .map(([k, v]) => [k, Math.round(((v - (before[k] ?? 0)) / Math.max(1, n)) * 100) / 100] as const)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  return Object.fromEntries(rows);
}
