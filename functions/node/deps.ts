/** What the node reconcile needs from the outside world, declared narrowly where it is used. */
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Leases } from '../../shared/state/port.ts';
import type { FrequencyMemo } from './topology-updater.ts';

/** Reads of nodes, VMIs, pods and DaemonSets; patches of nodes and VMIs; events. */
export type NodeKube = Pick<KubeClient, 'get' | 'list' | 'patch' | 'createEvent'>;

export interface NodeDeps {
  readonly kube: NodeKube;
  /** Arms the one-minute re-check once per node (shared/reconcile/periodic.ts). */
  readonly leases: Leases;
  /** Epoch ms: heartbeat ages are measured on this clock. */
  readonly now: () => number;
  /**
   * Simulated ms per wall-clock ms of `now` (see MigrationDeps.clockSpeed): the durable
   * requeue-after timer runs on the wall clock, so the one-minute re-check is divided by it.
   */
  readonly clockSpeed?: number;
  /** The KubeVirt CR's configuration (`minimumClusterTSCFrequency`), cached by the caller. */
  readonly clusterConfig: () => Promise<ClusterConfig>;
  readonly log: ReconcileLogger;
  /** The runtime's one reading of the TSC frequencies every node's labels follow (topology-updater.ts); absent, each pass reads them. */
  readonly frequencies?: FrequencyMemo;
}
