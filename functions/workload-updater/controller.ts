/** The workload-update controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations, Leases } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { WorkloadUpdaterDeps } from './deps.ts';
import { reconcileWorkloadUpdate } from './reconcile.ts';

export interface WorkloadUpdaterControllerOptions {
  readonly expectations: Expectations;
  readonly leases: Leases;
  readonly clusterConfig: () => Promise<ClusterConfig>;
  readonly log: ReconcileLogger;
  readonly now?: () => number;
  readonly clockSpeed?: number;
  readonly takeoverMs?: number;
  readonly random?: () => number;
  /** The runtime's registry, for the outdated-VMIs gauge. */
  readonly metrics?: Pick<MetricsRegistry, 'set'>;
}

export function workloadUpdaterController(opts: WorkloadUpdaterControllerOptions): ControllerSpec<WorkloadUpdaterDeps> {
  return {
    controller: 'workload-updater',
    reconcile: reconcileWorkloadUpdate,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      leases: opts.leases,
      clusterConfig: opts.clusterConfig,
      log: opts.log,
      now: opts.now ?? Date.now,
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
      ...(opts.takeoverMs !== undefined ? { takeoverMs: opts.takeoverMs } : {}),
      ...(opts.random !== undefined ? { random: opts.random } : {}),
      ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {}),
    }),
  };
}
