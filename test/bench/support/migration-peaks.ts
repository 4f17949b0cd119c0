/**
 * The migration limits as the cluster's writes show them, from milestones (milestones.ts): a
 * migration runs from its target pod's create until it is written Succeeded or Failed (or is
 * deleted), as KubeVirt counts running migrations; its source is its VMI's node as last written.
 * The highest counts, cluster-wide and outbound from one node, at any write. Pure.
 */
import type { Milestone } from './milestones.ts';

export interface MigrationPeaks {
  /** Most migrations running at once in the cluster. */
  readonly cluster: number;
  /** Most migrations running at once out of one node. */
  readonly perNode: number;
  /** Target pods created (a migration whose pod was replaced counts again). */
  readonly targetPods: number;
}

/** Folds milestones, in the order the API server wrote them, into {@link MigrationPeaks}. */
export class MigrationPeakTracker {
  readonly #vmiNode = new Map<string, string>();
  readonly #running = new Map<string, string>(); // migration uid → source node
  readonly #finished = new Set<string>();
  #cluster = 0;
  #perNode = 0;
  #targetPods = 0;

  see(m: Milestone): void {
    if (m.kind === 'vmi' && m.node) this.#vmiNode.set(m.name, m.node);
    if (m.kind === 'pod' && m.migrationUid && !this.#finished.has(m.migrationUid)) {
      this.#targetPods++;
      this.#running.set(m.migrationUid, this.#vmiNode.get(m.vmi) ?? `?${m.migrationUid}`);
    }
    if (m.kind === 'migration' && (m.phase === 'Succeeded' || m.phase === 'Failed' || m.phase === 'Deleted')) {
      this.#finished.add(m.uid);
      this.#running.delete(m.uid);
    }
    this.#cluster = Math.max(this.#cluster, this.#running.size);
    const byNode = new Map<string, number>();
    for (const n of this.#running.values()) byNode.set(n, (byNode.get(n) ?? 0) + 1);
    for (const k of byNode.values()) this.#perNode = Math.max(this.#perNode, k);
  }

  get peaks(): MigrationPeaks {
    return { cluster: this.#cluster, perNode: this.#perNode, targetPods: this.#targetPods };
  }
}
