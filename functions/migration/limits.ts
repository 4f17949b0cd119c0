/**
 * The parallel-migration limits (reference §d.4 steps 3–4): at most `parallelMigrationsPerCluster`
 * (default 5) migrations with a target pod, and at most `parallelOutboundMigrationsPerNode`
 * (default 2) of them leaving one node. KubeVirt counts running migrations in its informer cache
 * under a process-wide mutex; many function instances share no memory, so the count lives in the
 * state table as leases (docs/architecture.md §3): `migrations/cluster` and `migrations/node/<source node>`.
 * Acquire is a conditional write that never lets the holder count pass the limit, so two workers
 * racing for the last slot cannot both win; a lease expires, so a crashed holder cannot leak one.
 * The holder is the migration key; a migration holds its leases from just before its target pod
 * is created until it is final (or gone), renewing them on every reconcile.
 *
 * A lease alone does not make the limit hold: a reconcile slower than the TTL (a starved worker,
 * a slow API server) lets its holder's lease lapse while the migration runs on, and a second
 * migration would take the slot. So a granted lease is fenced against what the API server shows
 * running, as KubeVirt counts it (reference §d.4 step 3): before a target pod is created, the
 * holders of live leases and the running migrations together must leave room. Leases close the
 * race between workers acquiring at once (the API cannot show a pod not yet created); the API
 * count covers every migration whose lease ran out while it still runs.
 */
import type { VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import type { Leases } from '../../shared/state/port.ts';
import type { MigrationSettings } from '../../shared/config/cluster-config.ts';
import { migrationPriority } from '../../shared/predicates/migrations.ts';

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

/**
 * How long a migration held back by the limits waits before it asks again, on its own: KubeVirt
 * re-adds it after 1 s (priority ≥ 100), 3 s (≥ 50) or 5 s, and re-enqueues the highest-priority
 * Pending migrations whenever a migration finishes. Each ask costs a reconcile and its reads (four
 * API calls for an evacuation migration), so here the finish does the waking — the relay sends the
 * best waiting migrations when a migration gives its slot back (functions/relay/migration-wake.ts)
 * — and this recheck is only the safety net: for a wake that did not come or could not be used
 * (a lease that lapsed, a woken migration that could not start).
 */
export const LIMIT_RECHECK_SECONDS = 60;

/**
 * How long a migration whose target pod cannot be rendered yet waits: KubeVirt's interval for its
 * priority, 1 s (≥ 100), 3 s (≥ 50) or 5 s.
 */
export function retrySecondsForPriority(priority: string | undefined): number {
  const p = migrationPriority(priority);
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

/** A migration the API server shows running: its key (`namespace/name`) and source node, when known. */
export interface RunningMigration {
  readonly key: string;
  readonly sourceNode: string | undefined;
}

/**
 * The running migrations as KubeVirt counts them (its `findRunningMigrations`), pure: unfinished
 * migrations whose phase is Scheduling or later, plus unfinished ones (Pending, or no phase yet)
 * that already have a target pod. `withTargetPod` holds the UIDs named by target pods'
 * `kubevirt.io/migrationJobUID` label.
 */
export function runningMigrations(migrations: readonly VirtualMachineInstanceMigration[], withTargetPod: ReadonlySet<string>): RunningMigration[] {
  const out: RunningMigration[] = [];
  for (const m of migrations) {
    const phase = m.status?.phase ?? '';
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    if ((phase === '' || phase === 'Pending') && !withTargetPod.has(m.metadata?.uid ?? '')) continue;
    out.push({ key: `${m.metadata?.namespace ?? ''}/${m.metadata?.name ?? ''}`, sourceNode: m.status?.migrationState?.sourceNode });
  }
  return out;
}

/**
 * The fence, pure: after `holder` was granted both leases, do the other live lease holders and the
 * migrations the API shows running still leave it room? A running migration whose source node is
 * unknown counts against every node (it may leave this one).
 */
export function fenceLimits(
  holder: string,
  sourceNode: string,
  leaseHolders: { readonly cluster: readonly string[]; readonly node: readonly string[] },
  running: readonly RunningMigration[],
  limits: MigrationLimits,
): LimitVerdict {
  const cluster = new Set([...leaseHolders.cluster, ...running.map((r) => r.key)]);
  const node = new Set([...leaseHolders.node, ...running.filter((r) => r.sourceNode === undefined || r.sourceNode === sourceNode).map((r) => r.key)]);
  cluster.delete(holder);
  node.delete(holder);
  return decideLimits(holder, [...cluster], [...node], limits);
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
 * never sits on a cluster slot it cannot use. With `running` (what the API server shows running,
 * read only once both leases are granted, so a refused poll costs no API call) the grant is
 * fenced by {@link fenceLimits} and given back when it fails. Returns which limit refused, if any.
 */
export async function acquireSlots(leases: Leases, req: SlotRequest, running?: () => Promise<readonly RunningMigration[]>): Promise<LimitVerdict> {
  const node = nodeCounter(req.sourceNode);
  if (!(await leases.acquire(CLUSTER_COUNTER, req.holder, req.limits.cluster, req.now, req.ttlMs))) return 'cluster';
  if (!(await leases.acquire(node, req.holder, req.limits.perNode, req.now, req.ttlMs))) {
    await leases.release(CLUSTER_COUNTER, req.holder);
    return 'node';
  }
  if (!running) return undefined;
  // Holders read after our own grant: of two workers granted at once, each sees the other.
  const [apiRunning, clusterHolders, nodeHolders] = await Promise.all([running(), leases.holders(CLUSTER_COUNTER, req.now), leases.holders(node, req.now)]);
  const verdict = fenceLimits(req.holder, req.sourceNode, { cluster: clusterHolders, node: nodeHolders }, apiRunning, req.limits);
  if (verdict) await releaseSlots(leases, req.holder, req.sourceNode);
  return verdict;
}

/** Gives both leases back; safe to call when not holding them. */
export async function releaseSlots(leases: Leases, holder: string, sourceNode: string | undefined): Promise<void> {
  await leases.release(CLUSTER_COUNTER, holder);
  if (sourceNode) await leases.release(nodeCounter(sourceNode), holder);
}
