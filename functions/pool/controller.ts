/** The VM pool controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { PoolDeps } from './deps.ts';
import { reconcilePool } from './reconcile.ts';

export interface PoolControllerOptions {
  readonly expectations: Expectations;
  readonly log: Logger;
  readonly now?: () => number;
  /** See PoolDeps.clockSpeed. */
  readonly clockSpeed?: number;
  /** See PoolDeps.takeoverMs. */
  readonly takeoverMs?: number;
}

export function poolController(opts: PoolControllerOptions): ControllerSpec<PoolDeps> {
  return {
    controller: 'pool',
    reconcile: reconcilePool,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      now: opts.now ?? Date.now,
      log: opts.log,
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
      ...(opts.takeoverMs !== undefined ? { takeoverMs: opts.takeoverMs } : {}),
    }),
  };
}
