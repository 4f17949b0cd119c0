/** What the snapshot reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { VirtApiClient } from '../../shared/kube/virt-api.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';

export type SnapshotKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'createEvent'>;

/** Where `kubevirt_vmsnapshot_succeeded_timestamp_seconds` is set (a MetricsRegistry fits). */
export interface SnapshotMetrics {
  set(name: string, help: string, labels: Record<string, string>, value: number): void;
}

export interface SnapshotDeps {
  readonly kube: SnapshotKube;
  /** virt-api's subresources: the guest agent's freeze and unfreeze. */
  readonly virtApi: VirtApiClient;
  /** Epoch ms: deadlines, condition and error times. */
  readonly now: () => number;
  readonly log: ReconcileLogger;
  readonly metrics?: SnapshotMetrics;
  /**
   * Simulated ms per wall-clock ms of `now` (1 in production): the 5-second retry and the
   * deadline wait are measured on `now` and divided by it for the queue's wall-clock timers.
   */
  readonly clockSpeed?: number;
}
