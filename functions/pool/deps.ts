/** What the VM pool reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations } from '../../shared/state/port.ts';

export type PoolKube = Pick<KubeClient, 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'createEvent'>;

export interface PoolDeps {
  readonly kube: PoolKube;
  readonly expectations: Expectations;
  /** Epoch ms (autohealing's durations, condition times, expectation ages). */
  readonly now: () => number;
  /** ∈ [0, 1): the `Random` sort policy. Defaults to Math.random. */
  readonly random?: () => number;
  readonly log: ReconcileLogger;
  /**
   * Simulated ms per wall-clock ms of `now` (1 in production): the 3-second requeue and
   * expectation waits are measured on `now` and divided by it for the queue's wall-clock timers.
   */
  readonly clockSpeed?: number;
  /**
   * After this long an expectation whose VM never appeared (or never went) may be taken over: the
   * worker that recorded it crashed between the record and the write. Defaults to KubeVirt's
   * 5-minute expectation timeout; set it to the function timeout in production.
   */
  readonly takeoverMs?: number;
}

/**
 * Expectation scopes, per pool key. Both are UID-tracking sets: deletions by `namespace/name/uid`
 * (a VM re-created under the same name is not the one we deleted), creations by `namespace/name`
 * (pool VM names are deterministic, so the set says exactly which VMs a read must show).
 */
export const DELETION_EXPECTATIONS = 'pool-vm-deletions';
export const CREATION_EXPECTATIONS = 'pool-vm-creations';
