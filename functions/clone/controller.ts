/**
 * The clone controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { CloneDeps } from './deps.ts';
import { cloneRbac } from './rbac.ts';
import { reconcileClone } from './reconcile.ts';
import { cloneWakes } from './wakes.ts';

export const cloneController = defineController<CloneDeps>({
  name: 'clone',
  wakes: cloneWakes,
  rbac: cloneRbac,
  reconcile: reconcileClone,
  deps: contextDeps,
});
