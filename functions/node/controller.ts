/** The node controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Leases } from '../../shared/state/port.ts';
import type { NodeDeps } from './deps.ts';
import { reconcileNode } from './reconcile.ts';

export interface NodeControllerOptions {
  readonly leases: Leases;
  readonly log: ReconcileLogger;
  readonly now?: () => number;
  /** See NodeDeps.clockSpeed. */
  readonly clockSpeed?: number;
}

export function nodeController(opts: NodeControllerOptions): ControllerSpec<NodeDeps> {
  return {
    controller: 'node',
    reconcile: reconcileNode,
    deps: (kube: KubeClient) => ({ kube, leases: opts.leases, log: opts.log, now: opts.now ?? Date.now, ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}) }),
  };
}
