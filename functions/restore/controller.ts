/** The restore controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { VirtApiClient } from '../../shared/kube/virt-api.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { RestoreDeps } from './deps.ts';
import { reconcileRestore } from './reconcile.ts';

export interface RestoreControllerOptions {
  readonly virtApi: VirtApiClient;
  readonly log: Logger;
  readonly now?: () => number;
  /** See RestoreDeps.clockSpeed. */
  readonly clockSpeed?: number | undefined;
}

export function restoreController(opts: RestoreControllerOptions): ControllerSpec<RestoreDeps> {
  return {
    controller: 'restore',
    reconcile: reconcileRestore,
    deps: (kube: KubeClient) => ({ kube, virtApi: opts.virtApi, now: opts.now ?? Date.now, log: opts.log, ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}) }),
  };
}
