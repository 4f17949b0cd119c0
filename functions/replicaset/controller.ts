/**
 * The VMI replica set controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { RsDeps } from './deps.ts';
import { replicaSetRbac } from './rbac.ts';
import { reconcileReplicaSet } from './reconcile.ts';
import { replicaSetWakes } from './wakes.ts';

export const replicaSetController = defineController<RsDeps>({
  name: 'replicaset',
  wakes: replicaSetWakes,
  rbac: replicaSetRbac,
  reconcile: reconcileReplicaSet,
  deps: contextDeps,
});
