/** What the workload-updater reconcile needs from the outside world, declared narrowly. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations, Leases } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/template/cluster-config.ts';

/** The KubeVirt CR and its /status, VMIs, migrations (created, deleted), launcher pods, evictions, events. */
export type WorkloadUpdaterKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'patch' | 'delete' | 'evict' | 'createEvent'>;

export interface WorkloadUpdaterDeps {
  readonly kube: WorkloadUpdaterKube;
  /** Migration-creation expectations per KubeVirt key (scope {@link WORKLOAD_UPDATE_EXPECTATIONS}). */
  readonly expectations: Expectations;
  /** The eviction batch interval, the creation throttle and the re-run timer (shared/reconcile/periodic.ts). */
  readonly leases: Leases;
  /** The launcher image this controller renders and `parallelMigrationsPerCluster`; cached by the caller. */
  readonly clusterConfig: () => Promise<ClusterConfig>;
  readonly now: () => number;
  /** See NodeDeps.clockSpeed. */
  readonly clockSpeed?: number;
  /** ∈ [0, 1): the shuffle of the migratable VMIs. Defaults to Math.random. */
  readonly random?: () => number;
  readonly log: ReconcileLogger;
}

/** Expectation scope of workload-update migrations, keyed by the KubeVirt CR's `ns/name`. */
export const WORKLOAD_UPDATE_EXPECTATIONS = 'workload-update-migrations';
