/**
 * The evacuation (node drain) controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { EvacuationDeps } from './deps.ts';
import { evacuationRbac } from './rbac.ts';
import { reconcileEvacuation } from './reconcile.ts';
import { evacuationWakes } from './wakes.ts';

export const evacuationController = defineController<EvacuationDeps>({
  name: 'evacuation',
  wakes: evacuationWakes,
  rbac: evacuationRbac,
  reconcile: reconcileEvacuation,
  deps: contextDeps,
});
