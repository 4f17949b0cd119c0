/**
 * What wakes every controller's keys, in the registry's order: the relay's only view of the
 * controllers (functions/relay/ imports this file and nothing of a reconciler, so its bundle
 * carries no reconcile code: test/functions/lambda-bundle.test.ts checks esbuild's inputs). Each
 * entry is the `wakes` of the controller's definition (test/controllers.test.ts checks they agree).
 */
import type { ControllerWakes } from '../shared/reconcile/define-controller.ts';
import { backupWakes } from './backup/wakes.ts';
import { cloneWakes } from './clone/wakes.ts';
import { disruptionBudgetWakes } from './disruption-budget/wakes.ts';
import { evacuationWakes } from './evacuation/wakes.ts';
import { exportWakes } from './export/wakes.ts';
import { migrationWakes } from './migration/wakes.ts';
import { nodeWakes } from './node/wakes.ts';
import { poolWakes } from './pool/wakes.ts';
import { replicaSetWakes } from './replicaset/wakes.ts';
import { restoreWakes } from './restore/wakes.ts';
import { snapshotWakes } from './snapshot/wakes.ts';
import { vmWakes } from './vm/wakes.ts';
import { vmiWakes } from './vmi/wakes.ts';
import { workloadUpdaterWakes } from './workload-updater/wakes.ts';

/** Every controller's wakes. */
export const WAKES: readonly ControllerWakes[] = [
  vmiWakes,
  vmWakes,
  migrationWakes,
  poolWakes,
  replicaSetWakes,
  nodeWakes,
  evacuationWakes,
  disruptionBudgetWakes,
  workloadUpdaterWakes,
  exportWakes,
  snapshotWakes,
  restoreWakes,
  backupWakes,
  cloneWakes,
];
