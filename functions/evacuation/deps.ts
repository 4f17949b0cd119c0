/** What the evacuation reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';

/** Reads of nodes, VMIs, migrations and launcher pods; creates of migrations; events. */
export type EvacuationKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'createEvent'>;

export interface EvacuationDeps {
  readonly kube: EvacuationKube;
  /** Migration-creation expectations per node (scope {@link EVACUATION_EXPECTATIONS}). */
  readonly expectations: Expectations;
  /** The drain taint key and the cluster eviction strategy; cached by the caller. */
  readonly clusterConfig: () => Promise<ClusterConfig>;
  /** Epoch ms ("is migrating" compares migration timestamps with it; expectations age on it). */
  readonly now: () => number;
  /** See NodeDeps.clockSpeed. */
  readonly clockSpeed?: number;
  /** After how long an unsatisfied creation record is a dead pass's (shared/reconcile/expectations-gate.ts); default the 5-minute expiry. */
  readonly takeoverMs?: number;
  readonly log: ReconcileLogger;
}

/** Expectation scope of evacuation migrations, keyed by node name. */
export const EVACUATION_EXPECTATIONS = 'evacuation-migrations';
