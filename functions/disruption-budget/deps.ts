/** What the disruption-budget reconcile needs from the outside world, declared narrowly. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations } from '../../shared/state/port.ts';

/** GET of the VMI, LIST and DELETE of PodDisruptionBudgets, events. */
export type DisruptionBudgetKube = Pick<KubeClient, 'get' | 'list' | 'delete' | 'createEvent'>;

export interface DisruptionBudgetDeps {
  readonly kube: DisruptionBudgetKube;
  /** PDB-deletion expectations per VMI key (scope {@link PDB_EXPECTATIONS}). */
  readonly expectations: Expectations;
  /** Epoch ms: expectations age on it. */
  readonly now: () => number;
  /** See NodeDeps.clockSpeed. */
  readonly clockSpeed?: number;
  readonly log: ReconcileLogger;
}

/** Expectation scope of PDB deletions, keyed by VMI `ns/name`. */
export const PDB_EXPECTATIONS = 'disruption-budget-pdbs';
