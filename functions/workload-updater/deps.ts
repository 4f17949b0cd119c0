/** What the workload-updater reconcile needs from the outside world, declared narrowly. */
import { COMPONENT } from '../../shared/metrics/kubevirt/catalog.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { Expectations, Leases } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';

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
  /** After how long an unsatisfied creation record is a dead pass's (shared/reconcile/expectations-gate.ts); default the 5-minute expiry. */
  readonly takeoverMs?: number;
  /** ∈ [0, 1): the shuffle of the migratable VMIs. Defaults to Math.random. */
  readonly random?: () => number;
  readonly log: ReconcileLogger;
  /** Where the {@link OUTDATED_VMIS_GAUGE} goes (the runtime's registry: local /metrics, EMF on Lambda). */
  readonly metrics?: Pick<MetricsRegistry, 'set'>;
}

/** KubeVirt's gauge of VMIs not on the current launcher (len(allOutdated)), with its help text; no labels, as upstream. */
export const OUTDATED_VMIS_GAUGE = COMPONENT.outdated.name;
export const OUTDATED_VMIS_HELP = COMPONENT.outdated.help;

/** Expectation scope of workload-update migrations, keyed by the KubeVirt CR's `ns/name`. */
export const WORKLOAD_UPDATE_EXPECTATIONS = 'workload-update-migrations';
