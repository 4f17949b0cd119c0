/**
 * The export controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { ExportDeps } from './deps.ts';
import { exportRbac } from './rbac.ts';
import { reconcileExport } from './reconcile.ts';
import { exportWakes } from './wakes.ts';

export const exportController = defineController<ExportDeps>({
  name: 'export',
  wakes: exportWakes,
  rbac: exportRbac,
  reconcile: reconcileExport,
  deps: contextDeps,
});
