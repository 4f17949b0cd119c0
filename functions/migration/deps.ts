/** What the migration reconcile needs from the outside world, declared narrowly where it is used. */
import type { MigrationPolicy } from '../../shared/api/index.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { VirtApiClient } from '../../shared/kube/virt-api.ts';
import type { ReconcileLogger } from '../../shared/metrics/log.ts';
import type { Expectations, Leases } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { ClusterConfigRead } from '../../shared/config/cluster-config-cache.ts';

export type MigrationKube = Pick<
  KubeClient,
  'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'createEvent'
>;

/** What a reconcile logs through (shared by every controller). */
export type Logger = ReconcileLogger;

/** Migration policies and namespace labels, read rarely and cached by the caller (like the cluster config). */
export interface PolicySource {
  policies(): Promise<readonly MigrationPolicy[]>;
  namespaceLabels(namespace: string): Promise<Readonly<Record<string, string>>>;
}

export interface MigrationDeps {
  readonly kube: MigrationKube;
  readonly expectations: Expectations;
  /** Cross-key limits: `migrations/cluster` and `migrations/node/<node>` (docs/architecture.md §3). */
  readonly leases: Leases;
  /**
   * The cluster config from the KubeVirt CR; cached by the caller for a few seconds, read anew
   * with `{ fresh: true }` (the target pod's launcher image must be the CR's current one).
   */
  readonly clusterConfig: (read?: ClusterConfigRead) => Promise<ClusterConfig>;
  readonly policySource: PolicySource;
  /** virt-api's subresources: a system-critical migration aborts a running backup (pending-blocks.ts). */
  readonly virtApi: VirtApiClient;
  /** Epoch ms. Pod ages, timeouts and lease expiry are all measured on this clock. */
  readonly now: () => number;
  /**
   * Simulated ms per wall-clock ms of `now` (the sandbox clock's speed; 1 in production). The
   * queue's requeue-after timers run on the wall clock, so delays measured on `now` are divided
   * by it — otherwise a sped-up 300 s timeout would still wait 300 real seconds.
   */
  readonly clockSpeed?: number;
  readonly log: Logger;
  /** See VmiDeps.takeoverMs; defaults to 5 minutes. */
  readonly takeoverMs?: number;
  /** Lease lifetime on `now`; renewed on every reconcile of a migration that holds one. Default 5 minutes. */
  readonly leaseTtlMs?: number;
}

/** Expectation scope of target pods, keyed by migration key (reference §e). */
export const POD_EXPECTATIONS = 'migration-pods';

/** Expectation scope of target attachment pods (a hotplug VMI's), keyed by migration key. */
export const ATTACHMENT_POD_EXPECTATIONS = 'migration-attachment-pods';
