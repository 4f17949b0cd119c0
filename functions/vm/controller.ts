/** The VM controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { VmDeps } from './deps.ts';
import { reconcileVm } from './reconcile.ts';

export interface VmControllerOptions {
  readonly expectations: Expectations;
  readonly log: Logger;
  readonly now?: () => number;
  readonly takeoverMs?: number;
  /** See VmDeps.clockSpeed. */
  readonly clockSpeed?: number;
  readonly clusterConfig?: () => Promise<ClusterConfig>;
}

export function vmController(opts: VmControllerOptions): ControllerSpec<VmDeps> {
  return {
    controller: 'vm',
    reconcile: reconcileVm,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      now: opts.now ?? Date.now,
      log: opts.log,
      ...(opts.takeoverMs !== undefined ? { takeoverMs: opts.takeoverMs } : {}),
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
      ...(opts.clusterConfig !== undefined ? { clusterConfig: opts.clusterConfig } : {}),
    }),
  };
}
