/**
 * The restore controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { RestoreDeps } from './deps.ts';
import { restoreRbac } from './rbac.ts';
import { reconcileRestore } from './reconcile.ts';
import { restoreWakes } from './wakes.ts';

export const restoreController = defineController<RestoreDeps>({
  name: 'restore',
  wakes: restoreWakes,
  rbac: restoreRbac,
  reconcile: reconcileRestore,
  deps: contextDeps,
});
