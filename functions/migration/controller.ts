/** The migration controller as the runtime sees it: its reconcile and how to build its deps. */
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { ControllerSpec } from '../../shared/reconcile/instrument.ts';
import type { Expectations, Leases } from '../../shared/state/port.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { ClusterConfigRead } from '../../shared/config/cluster-config-cache.ts';
import type { MigrationDeps, PolicySource } from './deps.ts';
import { NO_POLICIES } from './policy-source.ts';
import { reconcileMigration } from './reconcile.ts';

export interface MigrationControllerOptions {
  readonly expectations: Expectations;
  readonly leases: Leases;
  readonly clusterConfig: (read?: ClusterConfigRead) => Promise<ClusterConfig>;
  readonly log: Logger;
  /** Migration policies and namespace labels; default none (the cluster config applies as is). */
  readonly policySource?: PolicySource;
  readonly now?: () => number;
  /** See MigrationDeps.clockSpeed. */
  readonly clockSpeed?: number;
  readonly createTakeoverMs?: number;
  readonly leaseTtlMs?: number;
}

export function migrationController(opts: MigrationControllerOptions): ControllerSpec<MigrationDeps> {
  return {
    controller: 'migration',
    reconcile: reconcileMigration,
    deps: (kube: KubeClient) => ({
      kube,
      expectations: opts.expectations,
      leases: opts.leases,
      clusterConfig: opts.clusterConfig,
      policySource: opts.policySource ?? NO_POLICIES,
      now: opts.now ?? Date.now,
      log: opts.log,
      ...(opts.clockSpeed !== undefined ? { clockSpeed: opts.clockSpeed } : {}),
      ...(opts.createTakeoverMs !== undefined ? { createTakeoverMs: opts.createTakeoverMs } : {}),
      ...(opts.leaseTtlMs !== undefined ? { leaseTtlMs: opts.leaseTtlMs } : {}),
    }),
  };
}
