/** What the replica set reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations } from '../../shared/state/port.ts';

export type RsKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'createEvent'>;

export interface RsDeps {
  readonly kube: RsKube;
  readonly expectations: Expectations;
  /** Epoch ms. */
  readonly now: () => number;
  readonly log: ReconcileLogger;
  /** At most this many creations or deletions per pass (KubeVirt's BurstReplicas, 250). */
  readonly burstReplicas?: number;
  /**
   * After this long an unsatisfied expectation that a read cannot settle (a worker died between
   * its creates and recording their names) may be taken over: per-key serialization means that
   * worker has been gone at least a visibility timeout. Defaults to 5 minutes (KubeVirt's
   * expectation timeout); set it to the function timeout in production.
   */
  readonly takeoverMs?: number;
  /** Simulated ms per wall-clock ms of `now` (a sped-up sandbox clock); requeue timers run on the wall clock. */
  readonly clockSpeed?: number;
}

/** KubeVirt's `BurstReplicas` for replica sets and pools. */
export const BURST_REPLICAS = 250;

/** KubeVirt's expectations per replica set key: creations (`add`) and deletions by `namespace/name`. */
export const RS_EXPECTATIONS = 'rs-vmis';
/**
 * The names of the VMIs the last burst created, as a key set (`namespace/name`): generateName means
 * a creation's name is known only once the create returns, and a read recognises our creations by
 * it. Written once the burst's creates have all returned, so a record here also says "that burst is over".
 */
export const RS_CREATED = 'rs-vmis-created';

/** The event recorder's component name upstream. */
export const RS_EVENT_SOURCE = 'virtualmachinereplicaset-controller';
