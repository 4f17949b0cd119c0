/**
 * The node controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { defineController } from '../../shared/reconcile/define-controller.ts';
import type { NodeDeps } from './deps.ts';
import { nodeRbac } from './rbac.ts';
import { reconcileNode } from './reconcile.ts';
import { frequencyMemo } from './topology-updater.ts';
import { nodeWakes } from './wakes.ts';

export const nodeController = defineController<NodeDeps>({
  name: 'node',
  wakes: nodeWakes,
  rbac: nodeRbac,
  reconcile: reconcileNode,
  // One reading of the cluster's TSC frequencies per runtime serves every node's pass (topology-updater.ts).
  deps: (ctx) => {
    const frequencies = frequencyMemo();
    return (kube) => ({ ...ctx, kube, frequencies });
  },
});
