/**
 * Every controller's definition, in the registry's order (shared/controllers.ts holds the queue
 * facts each name stands for: key scope, workers, weight, sweep). The local runtime, the CLI, the
 * CDK app's RBAC and the sandbox's identities read this list; the Lambda functions do not — each
 * `functions/<name>/handler.ts` imports its own definition, and its bundle holds only that one —
 * and neither does the relay, which imports the wakes alone (functions/wakes.ts).
 *
 * Adding a controller (docs/architecture.md): its folder, its definition, one line here and one
 * in functions/wakes.ts; test/controllers.test.ts checks the three lists agree.
 */
import { CONTROLLERS, type Controller } from '../shared/controllers.ts';
import type { ControllerDefinition } from '../shared/reconcile/define-controller.ts';
import { backupController } from './backup/controller.ts';
import { cloneController } from './clone/controller.ts';
import { disruptionBudgetController } from './disruption-budget/controller.ts';
import { evacuationController } from './evacuation/controller.ts';
import { exportController } from './export/controller.ts';
import { migrationController } from './migration/controller.ts';
import { nodeController } from './node/controller.ts';
import { poolController } from './pool/controller.ts';
import { replicaSetController } from './replicaset/controller.ts';
import { restoreController } from './restore/controller.ts';
import { snapshotController } from './snapshot/controller.ts';
import { vmController } from './vm/controller.ts';
import { vmiController } from './vmi/controller.ts';
import { workloadUpdaterController } from './workload-updater/controller.ts';

/** Every definition, in registry order. */
export const DEFINITIONS: readonly ControllerDefinition<unknown>[] = [
  vmiController,
  vmController,
  migrationController,
  poolController,
  replicaSetController,
  nodeController,
  evacuationController,
  disruptionBudgetController,
  workloadUpdaterController,
  exportController,
  snapshotController,
  restoreController,
  backupController,
  cloneController,
].sort((a, b) => CONTROLLERS.indexOf(a.name) - CONTROLLERS.indexOf(b.name));

/** The definition of `name`. */
export function definitionOf(name: Controller): ControllerDefinition<unknown> {
  const def = DEFINITIONS.find((d) => d.name === name);
  if (!def) throw new Error(`no controller definition for ${name}`);
  return def;
}
