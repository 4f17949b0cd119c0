/**
 * The disruption-budget controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { DisruptionBudgetDeps } from './deps.ts';
import { disruptionBudgetRbac } from './rbac.ts';
import { reconcileDisruptionBudget } from './reconcile.ts';
import { disruptionBudgetWakes } from './wakes.ts';

export const disruptionBudgetController = defineController<DisruptionBudgetDeps>({
  name: 'disruption-budget',
  wakes: disruptionBudgetWakes,
  rbac: disruptionBudgetRbac,
  reconcile: reconcileDisruptionBudget,
  deps: contextDeps,
});
