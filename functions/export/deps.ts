/** What the export reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';

export type ExportKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'update' | 'delete' | 'createEvent'>;

export interface ExportDeps {
  readonly kube: ExportKube;
  /** Epoch ms. */
  readonly now: () => number;
  readonly log: ReconcileLogger;
  /** Simulated ms per wall-clock ms of `now` (a sped-up sandbox clock); requeue timers run on the wall clock. */
  readonly clockSpeed?: number;
  /** The KubeVirt CR's configuration (the VM manifest's expansion applies its defaults); without it, the CR read by the pass. */
  readonly clusterConfig?: () => Promise<ClusterConfig>;
}
