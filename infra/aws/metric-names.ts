/**
 * The contract between the functions' EMF metrics and the dashboard (docs/deploy-aws.md,
 * "Metrics contract"): names as client-go / controller-runtime users know them (STYLE.md §12),
 * in the namespace `POWERTOOLS_METRICS_NAMESPACE` (default VirtReconciler), dimension
 * `controller` (+ `result` on reconcile_total).
 */
import type { Settled } from '../../shared/queue/settle.ts';

export const METRIC = {
  /** Count, dimensions {controller, result}. */
  reconcileTotal: 'reconcile_total',
  /** Seconds, dimension {controller}: one reconcile's wall time. */
  reconcileTime: 'reconcile_time_seconds',
  /** Count, dimension {controller}: API calls one reconcile made (shared/kube/call-counter.ts). */
  apiCallsPerReconcile: 'api_calls_per_reconcile',
} as const;

export const DIMENSION = { controller: 'controller', result: 'result' } as const;

/** Values of the `result` dimension: how a key settled (shared/queue/settle.ts), or failed. */
export const RESULTS: readonly (Settled | 'failed')[] = ['done', 'requeued', 'retrying', 'dead-lettered', 'failed'];
