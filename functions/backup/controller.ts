/**
 * The backup controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { contextDeps, defineController } from '../../shared/reconcile/define-controller.ts';
import type { BackupDeps } from './deps.ts';
import { backupRbac } from './rbac.ts';
import { reconcileBackup } from './reconcile.ts';
import { backupWakes } from './wakes.ts';

export const backupController = defineController<BackupDeps>({
  name: 'backup',
  wakes: backupWakes,
  rbac: backupRbac,
  reconcile: reconcileBackup,
  deps: contextDeps,
});
