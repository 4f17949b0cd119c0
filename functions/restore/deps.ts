/** What the restore reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { VirtApiClient } from '../../shared/kube/virt-api.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';

export type RestoreKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'createEvent'>;

export interface RestoreDeps {
  readonly kube: RestoreKube;
  /** virt-api's VM `stop` (the StopTarget readiness policy). */
  readonly virtApi: VirtApiClient;
  /** Epoch ms: the grace period, condition times, restoreTime. */
  readonly now: () => number;
  readonly log: ReconcileLogger;
  /** Simulated ms per wall-clock ms of `now` (1 in production), for the grace-period wake-up. */
  readonly clockSpeed?: number;
}
