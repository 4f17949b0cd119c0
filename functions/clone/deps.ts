/** What the clone reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';

export type CloneKube = Pick<KubeClient, 'get' | 'create' | 'update' | 'delete' | 'createEvent'>;

export interface CloneDeps {
  readonly kube: CloneKube;
  /** Epoch ms: condition times. */
  readonly now: () => number;
  readonly log: ReconcileLogger;
  /** `Math.random`'s contract: the generated target name's suffix (tests pin it). */
  readonly random?: () => number;
}
