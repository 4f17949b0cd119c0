/**
 * The parallel-migration limits (reference §d.4 steps 3–4): at most `parallelMigrationsPerCluster`
 * (default 5) migrations with a target pod, and at most `parallelOutboundMigrationsPerNode`
 * (default 2) of them leaving one node. KubeVirt counts running migrations in its informer cache
 * under a process-wide mutex; many function instances share no memory, so the count lives in the
 * state table as leases (DESIGN.md §3): `migrations/cluster` and `migrations/node/<source node>`.
 * Acquire is a conditional write that never lets the holder count pass the limit, so two workers
 * racing for the last slot cannot both win; a lease expires, so a crashed holder cannot leak one.
 * The holder is the migration key; a migration holds its leases from just before its target pod
 * is created until it is final (or gone), renewing them on every reconcile.
 */
import type { Leases } from '../../shared/state/port.ts';
import type { MigrationSettings } from '../../shared/template/cluster-config.ts';

export const CLUSTER_COUNTER = 'migrations/cluster';

export function nodeCounter(node: string): string {
  return `migrations/node/${node}`;
}

export interface MigrationLimits {
  readonly cluster: number;
  readonly perNode: number;
}

export function limitsOf(settings: Pick<MigrationSettings, 'parallelMigrationsPerCluster' | 'parallelOutboundMigrationsPerNode'>): MigrationLimits {
  return { cluster: settings.parallelMigrationsPerCluster, perNode: settings.parallelOutboundMigrationsPerNode };
}

/** KubeVirt's priorities (`pkg/util/migrations`): `spec.priority` → queue priority. */
export function priorityOf(priority: string | undefined): number {
  switch (priority) {
    case 'system-critical':
      return 100;
    case 'user-triggered':
      return 50;
    case 'system-maintenance':
      return 20;
    default:
      return 0;
  }
}

/**
 * How long a migration waits before asking for a slot again: KubeVirt re-adds it with its
 * priority after 1 s (≥ 100), 3 s (≥ 50) or 5 s. A queue of keys has no priorities, so this
 * retry interval is the priority: higher-priority migrations ask more often and, on average,
 * take a freed slot first.
 */
export function retrySecondsForPriority(priority: string | undefined): number {
  const p = priorityOf(priority);
  return p >= 100 ? 1 : p >= 50 ? 3 : 5;
}

/** Why a migration cannot start yet, or undefined when both counts leave room. */
export type LimitVerdict = undefined | 'cluster' | 'node';

/**
 * The limit decision as a pure function of the live holders (for tests and logs): a holder
 * already counted keeps its slot (re-acquire is idempotent).
 */
export function decideLimits(holder: string, clusterHolders: readonly string[], nodeHolders: readonly string[], limits: MigrationLimits): LimitVerdict {
  if (!clusterHolders.includes(holder) && clusterHolders.length >= limits.cluster) return 'cluster';
  if (!nodeHolders.includes(holder) && nodeHolders.length >= limits.perNode) return 'node';
  return undefined;
}

export interface SlotRequest {
  readonly holder: string;
  readonly sourceNode: string;
  readonly limits: MigrationLimits;
  readonly now: number;
  readonly ttlMs: number;
}

/**
 * Takes (or renews) both leases; on a node refusal gives the cluster slot back, so a migration
 * never sits on a cluster slot it cannot use. Returns which limit refused, if any.
 */
export async function acquireSlots(leases: Leases, req: SlotRequest): Promise<LimitVerdict> {
  if (!(await leases.acquire(CLUSTER_COUNTER, req.holder, req.limits.cluster, req.now, req.ttlMs))) return 'cluster';
  if (!(await leases.acquire(nodeCounter(req.sourceNode), req.holder, req.limits.perNode, req.now, req.ttlMs))) {
    await leases.release(CLUSTER_COUNTER, req.holder);
    return 'node';
  }
  return undefined;
}

/** Gives both leases back; safe to call when not holding them. */
export async function releaseSlots(leases: Leases, holder: string, sourceNode: string | undefined): Promise<void> {
  await leases.release(CLUSTER_COUNTER, holder);
  if (sourceNode) await leases.release(nodeCounter(sourceNode), holder);
}
