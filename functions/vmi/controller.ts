/** The VMI controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { VmiDeps } from './deps.ts';
import { reconcileVmi } from './reconcile.ts';

export interface VmiControllerOptions {
  readonly expectations: Expectations;
  readonly clusterConfig: () => Promise<ClusterConfig>;
  readonly log: Logger;
  readonly now?: () => number;
  readonly createTakeoverMs?: number;
}

export function vmiController(opts: VmiControllerOptions): ControllerSpec<VmiDeps> {
  return {
    controller: 'vmi',
    reconcile: reconcileVmi,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      clusterConfig: opts.clusterConfig,
      now: opts.now ?? Date.now,
      log: opts.log,
      ...(opts.createTakeoverMs !== undefined ? { createTakeoverMs: opts.createTakeoverMs } : {}),
    }),
  };
}
