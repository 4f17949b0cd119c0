/** The snapshot controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { VirtApiClient } from '../../shared/kube/virt-api.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { SnapshotDeps, SnapshotMetrics } from './deps.ts';
import { reconcileSnapshot } from './reconcile.ts';

export interface SnapshotControllerOptions {
  readonly virtApi: VirtApiClient;
  readonly log: Logger;
  readonly metrics?: SnapshotMetrics | undefined;
  readonly now?: () => number;
  /** See SnapshotDeps.clockSpeed. */
  readonly clockSpeed?: number | undefined;
}

export function snapshotController(opts: SnapshotControllerOptions): ControllerSpec<SnapshotDeps> {
  return {
    controller: 'snapshot',
    reconcile: reconcileSnapshot,
    deps: (kube: KubeClient) => ({
      kube,
      virtApi: opts.virtApi,
      now: opts.now ?? Date.now,
      log: opts.log,
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
    }),
  };
}
