/** The replica set controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { RsDeps } from './deps.ts';
import { reconcileReplicaSet } from './reconcile.ts';

export interface ReplicaSetControllerOptions {
  readonly expectations: Expectations;
  readonly log: Logger;
  readonly now?: () => number;
  /** See RsDeps.takeoverMs. */
  readonly takeoverMs?: number;
  /** See RsDeps.clockSpeed. */
  readonly clockSpeed?: number;
  /** See RsDeps.burstReplicas. */
  readonly burstReplicas?: number;
}

export function replicaSetController(opts: ReplicaSetControllerOptions): ControllerSpec<RsDeps> {
  return {
    controller: 'replicaset',
    reconcile: reconcileReplicaSet,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      now: opts.now ?? Date.now,
      log: opts.log,
      ...(opts.takeoverMs !== undefined ? { takeoverMs: opts.takeoverMs } : {}),
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
      ...(opts.burstReplicas !== undefined ? { burstReplicas: opts.burstReplicas } : {}),
    }),
  };
}
