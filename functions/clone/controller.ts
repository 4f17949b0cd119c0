/** The clone controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { CloneDeps } from './deps.ts';
import { reconcileClone } from './reconcile.ts';

export interface CloneControllerOptions {
  readonly log: Logger;
  readonly now?: () => number;
}

export function cloneController(opts: CloneControllerOptions): ControllerSpec<CloneDeps> {
  return {
    controller: 'clone',
    reconcile: reconcileClone,
    deps: (kube: KubeClient) => ({ kube, now: opts.now ?? Date.now, log: opts.log }),
  };
}
