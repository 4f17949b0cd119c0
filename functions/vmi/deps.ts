/** What the VMI reconcile needs from the outside world, declared narrowly where it is used. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations, Leases } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';

export type VmiKube = Pick<
  KubeClient,
  'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'createEvent'
>;

/** What a reconcile logs through (shared by every controller). */
export type Logger = ReconcileLogger;

export interface VmiDeps {
  readonly kube: VmiKube;
  readonly expectations: Expectations;
  /** Reservations of VSOCK CIDs between their choice and the hand-off that records them (vsock-cid.ts). */
  readonly leases: Leases;
  /** The cluster config from the KubeVirt CR; cached by the caller for a few seconds. */
  readonly clusterConfig: () => Promise<ClusterConfig>;
  /** Epoch ms. */
  readonly now: () => number;
  readonly log: Logger;
  /**
   * After this long an unsatisfied pod-creation expectation whose pod never appeared may be taken
   * over: per-key serialization means the worker that recorded it has been gone at least a
   * visibility timeout, so no create of its can still be in flight. Defaults to 5 minutes
   * (KubeVirt's expectation timeout); set it to the function timeout in production.
   */
  readonly takeoverMs?: number;
}

/** Expectation scopes (KubeVirt keeps one store per kind of object it waits for). */
export const POD_EXPECTATIONS = 'vmi-pods';
/** The backend-storage PVC a VMI controller pass created and no read has shown yet (KubeVirt's pvcExpectations). */
export const BACKEND_PVC_EXPECTATIONS = 'vmi-backend-pvcs';
