/** The disruption-budget controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { DisruptionBudgetDeps } from './deps.ts';
import { reconcileDisruptionBudget } from './reconcile.ts';

export interface DisruptionBudgetControllerOptions {
  readonly expectations: Expectations;
  readonly log: ReconcileLogger;
  readonly now?: () => number;
  readonly clockSpeed?: number;
}

export function disruptionBudgetController(opts: DisruptionBudgetControllerOptions): ControllerSpec<DisruptionBudgetDeps> {
  return {
    controller: 'disruption-budget',
    reconcile: reconcileDisruptionBudget,
    deps: (kube: KubeClient) => ({ kube, expectations: opts.expectations, log: opts.log, now: opts.now ?? Date.now, ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}) }),
  };
}
