/** The export controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { ExportDeps } from './deps.ts';
import { reconcileExport } from './reconcile.ts';

export interface ExportControllerOptions {
  readonly log: Logger;
  readonly now?: () => number;
  /** See ExportDeps.clockSpeed. */
  readonly clockSpeed?: number;
}

export function exportController(opts: ExportControllerOptions): ControllerSpec<ExportDeps> {
  return {
    controller: 'export',
    reconcile: reconcileExport,
    deps: (kube: KubeClient) => ({ kube, now: opts.now ?? Date.now, log: opts.log, ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}) }),
  };
}
