/**
 * Which waiting migrations to wake when a migration gives its parallel-limit slot back (pure).
 *
 * KubeVirt's migration controller re-enqueues up to `parallelMigrationsPerCluster` Pending
 * migrations, highest priority first, on every pass of a final migration
 * (`reEnqueueHighestPriorityPendingMigrations`), and its waiting migrations also ask again every
 * 1–5 s. Both are reads of its informer cache. Here each ask is a reconcile with its API reads, so
 * a waiting migration asks again only rarely on its own (functions/migration/limits.ts
 * `LIMIT_RECHECK_SECONDS`) and the relay wakes the ones that can use the freed slot.
 *
 * A finish frees one slot on its source node and one in the cluster: so the best waiting
 * migration of that node (it can use both), and the best of any other node (it can use the cluster
 * slot when its own node has room). Best = highest priority, then the one woken least recently
 * (the caller moves woken keys to the back of its order, so two slots freed before the relay sees
 * the first woken migration start wake two different ones). With the source node unknown, the
 * two best of all.
 */

/** A migration waiting for a slot, as the relay indexes it. */
export interface WaitingMigration {
  /** KubeVirt's queue priority of its `spec.priority` (shared/predicates/migrations.ts). */
  readonly priority: number;
  /** The source node: its VMI's `status.nodeName`, when the relay has seen it. */
  readonly node: string | undefined;
}

/**
 * The keys to wake, from `waiting` in the caller's order (least recently woken first) and the
 * freed slot's source node. At most two.
 */
export function pickWaitingToWake(waiting: Iterable<readonly [string, WaitingMigration]>, sourceNode: string | undefined): string[] {
  let sameNode: { key: string; priority: number } | undefined;
  let otherNode: { key: string; priority: number } | undefined;
  let second: { key: string; priority: number } | undefined;
  for (const [key, w] of waiting) {
    const candidate = { key, priority: w.priority };
    if (sourceNode === undefined) {
      // The two best of all: keep the first two by priority (order breaks ties).
      if (!sameNode || w.priority > sameNode.priority) {
        second = sameNode;
        sameNode = candidate;
      } else if (!second || w.priority > second.priority) second = candidate;
      continue;
    }
    if (w.node === sourceNode) {
      if (!sameNode || w.priority > sameNode.priority) sameNode = candidate;
    } else if (!otherNode || w.priority > otherNode.priority) otherNode = candidate;
  }
  const picked = sourceNode === undefined ? [sameNode, second] : [sameNode, otherNode];
  return picked.flatMap((p) => (p ? [p.key] : []));
}
