/** What the VM reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Expectations } from '../../shared/state/port.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';

/** What a reconcile logs through (shared by every controller). */
export type Logger = ReconcileLogger;

export type VmKube = Pick<
  KubeClient,
  'get' | 'create' | 'patch' | 'delete' | 'createEvent'
>;

export interface VmDeps {
  readonly kube: VmKube;
  readonly expectations: Expectations;
  /** Epoch ms. */
  readonly now: () => number;
  /**
   * Simulated ms per wall-clock ms of `now` (the sandbox clock's speed; 1 in production). The
   * queue's requeue-after timers run on the wall clock, so waits measured on `now` (start-failure
   * backoff, expectation takeover) are divided by it — see MigrationDeps.clockSpeed.
   */
  readonly clockSpeed?: number;
  /** ∈ [0, 1): start-failure backoff jitter. Defaults to Math.random. */
  readonly random?: () => number;
  readonly log: Logger;
  /** The cluster config from the KubeVirt CR (feature gates for declarative hotplug); KubeVirt's defaults when absent. */
  readonly clusterConfig?: () => Promise<ClusterConfig>;
  /**
   * After this long an unsatisfied expectation whose object never appeared (or never went) may be
   * taken over: per-key serialization means the worker that recorded it has been gone at least a
   * visibility timeout. Defaults to 5 minutes (KubeVirt's expectation timeout); set it to the
   * function timeout in production.
   */
  readonly takeoverMs?: number;
}

/** Expectation scopes: VMI creations/deletions and DataVolume creations, per VM key. */
export const VMI_EXPECTATIONS = 'vm-vmis';
export const DV_EXPECTATIONS = 'vm-dvs';
