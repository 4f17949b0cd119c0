/** The evacuation controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { EvacuationDeps } from './deps.ts';
import { reconcileEvacuation } from './reconcile.ts';

export interface EvacuationControllerOptions {
  readonly expectations: Expectations;
  readonly clusterConfig: () => Promise<ClusterConfig>;
  readonly log: ReconcileLogger;
  readonly now?: () => number;
  readonly clockSpeed?: number;
  readonly takeoverMs?: number;
}

export function evacuationController(opts: EvacuationControllerOptions): ControllerSpec<EvacuationDeps> {
  return {
    controller: 'evacuation',
    reconcile: reconcileEvacuation,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      clusterConfig: opts.clusterConfig,
      log: opts.log,
      now: opts.now ?? Date.now,
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
      ...(opts.takeoverMs !== undefined ? { takeoverMs: opts.takeoverMs } : {}),
    }),
  };
}
