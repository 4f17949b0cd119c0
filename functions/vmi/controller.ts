/**
 * The VMI controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { VmiDeps } from './deps.ts';
import { vmiRbac } from './rbac.ts';
import { reconcileVmi } from './reconcile.ts';
import { vmiWakes } from './wakes.ts';

export const vmiController = defineController<VmiDeps>({
  name: 'vmi',
  wakes: vmiWakes,
  rbac: vmiRbac,
  reconcile: reconcileVmi,
  deps: contextDeps,
});
