/**
 * The small indexes the relay keeps to map an event to the keys it affects. Only names and
 * UIDs, never object contents, so memory stays a few hundred bytes per watched object.
 */

/** A many-to-many index from a string to a set of keys, with cheap removal by owner. */
export class KeyIndex {
  readonly #byTerm = new Map<string, Set<string>>();
  readonly #byOwner = new Map<string, string[]>();

  /** Replaces the terms `owner` (a key) is listed under. */
  set(owner: string, terms: readonly string[]): void {
    this.delete(owner);
    if (terms.length === 0) return;
    this.#byOwner.set(owner, [...terms]);
    for (const t of terms) {
      let s = this.#byTerm.get(t);
      if (!s) this.#byTerm.set(t, (s = new Set()));
      s.add(owner);
    }
  }

  delete(owner: string): void {
    const terms = this.#byOwner.get(owner);
    if (!terms) return;
    this.#byOwner.delete(owner);
    for (const t of terms) {
      const s = this.#byTerm.get(t);
      s?.delete(owner);
      if (s?.size === 0) this.#byTerm.delete(t);
    }
  }

  get(term: string): readonly string[] {
    return [...(this.#byTerm.get(term) ?? [])];
  }

  get size(): number {
    return this.#byOwner.size;
  }
}

/** Everything the relay remembers. */
export class RelayIndexes {
  /** pod uid → owning VMI key, for attachment pods (controller ref kind Pod) and deletions. */
  readonly podOwner = new Map<string, string>();
  /** `ns/claim` → VMI keys whose volumes use it. */
  readonly vmiClaims = new KeyIndex();
  /** `ns/claim` → VM keys whose template volumes or DataVolume templates use it. */
  readonly vmClaims = new KeyIndex();
  /** `ns/vmiName` → migration keys for that VMI. */
  readonly vmiMigrations = new KeyIndex();
  /** migration uid → migration key (target pods carry the migration's UID). */
  readonly migrationByUid = new Map<string, string>();
  /** Migration keys not yet finished (re-enqueued when the cluster config changes). */
  readonly activeMigrations = new Set<string>();
  /**
   * Migrations waiting for a parallel-limit slot (no phase yet or Pending, not deleting), least
   * recently woken first: woken when a migration gives its slot back (migration-wake.ts).
   */
  readonly waitingMigrations = new Map<string, { readonly priority: number; readonly vmi: string }>();
  /**
   * Migrations that may still hold a slot: seen not final, or final with the finalizer still on
   * (the reconcile gives the slot back just before it removes it). Leaving this set wakes waiters.
   */
  readonly unreleasedMigrations = new Set<string>();
  /** VMI key → `status.nodeName` (a waiting migration's source node). */
  readonly vmiNodes = new Map<string, string>();
  /** All VMI keys (re-enqueued when the KubeVirt CR's backup-hooks annotation changes). */
  readonly vmis = new Set<string>();
  /** All VM keys (an orphan VMI wakes the VM of its name only when one exists). */
  readonly vms = new Set<string>();
}
