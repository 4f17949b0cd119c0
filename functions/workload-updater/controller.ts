/**
 * The workload-update controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { WorkloadUpdaterDeps } from './deps.ts';
import { workloadUpdaterRbac } from './rbac.ts';
import { reconcileWorkloadUpdate } from './reconcile.ts';
import { workloadUpdaterWakes } from './wakes.ts';

export const workloadUpdaterController = defineController<WorkloadUpdaterDeps>({
  name: 'workload-updater',
  wakes: workloadUpdaterWakes,
  rbac: workloadUpdaterRbac,
  reconcile: reconcileWorkloadUpdate,
  deps: contextDeps,
});
