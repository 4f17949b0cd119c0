/**
 * The VM pool controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { PoolDeps } from './deps.ts';
import { poolRbac } from './rbac.ts';
import { reconcilePool } from './reconcile.ts';
import { poolWakes } from './wakes.ts';

export const poolController = defineController<PoolDeps>({
  name: 'pool',
  wakes: poolWakes,
  rbac: poolRbac,
  reconcile: reconcilePool,
  deps: contextDeps,
});
