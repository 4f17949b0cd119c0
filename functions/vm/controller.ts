/**
 * The VM controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { VmDeps } from './deps.ts';
import { vmRbac } from './rbac.ts';
import { reconcileVm } from './reconcile.ts';
import { vmWakes } from './wakes.ts';

export const vmController = defineController<VmDeps>({
  name: 'vm',
  wakes: vmWakes,
  rbac: vmRbac,
  reconcile: reconcileVm,
  deps: contextDeps,
});
