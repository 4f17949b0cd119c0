/**
 * The snapshot controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { SnapshotDeps } from './deps.ts';
import { snapshotRbac } from './rbac.ts';
import { reconcileSnapshot } from './reconcile.ts';
import { snapshotWakes } from './wakes.ts';

export const snapshotController = defineController<SnapshotDeps>({
  name: 'snapshot',
  wakes: snapshotWakes,
  rbac: snapshotRbac,
  reconcile: reconcileSnapshot,
  deps: contextDeps,
});
