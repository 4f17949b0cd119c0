/**
 * The contract between the functions' EMF metrics and the dashboard (docs/deploy-aws.md,
 * "Metrics contract"): names as client-go / controller-runtime users know them (docs/architecture.md §6.12),
 * in the namespace `POWERTOOLS_METRICS_NAMESPACE` (default VirtReconciler), dimension
 * `controller` (+ `result` on reconcile_total).
 */
import type { Controller } from '../../shared/queue/message.ts';
import type { Settled } from '../../shared/queue/settle.ts';

export const METRIC = {
  /** Count, dimensions {controller, result}. */
  reconcileTotal: 'reconcile_total',
  /** Seconds, dimension {controller}: one reconcile's wall time. */
  reconcileTime: 'reconcile_time_seconds',
  /** Count, dimension {controller}: API calls one reconcile made (shared/kube/call-counter.ts). */
  apiCallsPerReconcile: 'api_calls_per_reconcile',
  /** None, no dimensions (as KubeVirt's gauge has no labels): VMIs not on the current launcher (functions/workload-updater). */
  outdatedVmis: 'kubevirt_vmi_number_of_outdated',
} as const;

/** KubeVirt's own gauges a controller exports (with no dimensions), drawn on its dashboard row. */
export const CONTROLLER_GAUGES: Partial<Record<Controller, readonly string[]>> = { 'workload-updater': [METRIC.outdatedVmis] };

export const DIMENSION = { controller: 'controller', result: 'result' } as const;

/** Values of the `result` dimension: how a key settled (shared/queue/settle.ts), or failed. */
export const RESULTS: readonly (Settled | 'failed')[] = ['done', 'requeued', 'retrying', 'dead-lettered', 'failed'];
