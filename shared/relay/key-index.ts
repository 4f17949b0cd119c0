/**
 * The small indexes a relay mapper keeps to map an event to the keys it affects. Only names and
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
