/**
 * Secondary indexes over an informer's cache: index name → the values an object is found under
 * (e.g. the uid of its owning VMI), so "the pods of this VMI" costs the pods found, not a scan of
 * every pod. Kept up to date from the informer's events, before its handler runs.
 */
import type { CacheEvent } from './watched-cache.ts';
import type { KubeObject } from './objects.ts';

/** Index name → the values an object is indexed under. */
export type IndexFunctions<T> = Record<string, (obj: T) => readonly string[]>;

export class ObjectIndexes<T extends KubeObject> {
  readonly #functions: IndexFunctions<T>;
  readonly #what: string;
  /** index name → value → object key → object. */
  readonly #index = new Map<string, Map<string, Map<string, T>>>();
  /** index name → object key → the values it is indexed under now. */
  readonly #indexed = new Map<string, Map<string, readonly string[]>>();

  /** `what` names the cache in the error for an undeclared index. */
  constructor(functions: IndexFunctions<T>, what: string) {
    this.#functions = functions;
    this.#what = what;
  }

  /** The objects found under `value` in index `name`. */
  byIndex(name: string, value: string): readonly T[] {
    if (!this.#functions[name]) throw new Error(`${this.#what}: no index ${name}`);
    const found = this.#index.get(name)?.get(value);
    return found ? [...found.values()] : [];
  }

  /** Forgets every object (a view that starts again is replayed from its cache). */
  clear(): void {
    this.#index.clear();
    this.#indexed.clear();
  }

  /** Moves `obj` to the index entries its new state (or its deletion) calls for. */
  update(event: CacheEvent, obj: T): void {
    const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    for (const [name, valuesOf] of Object.entries(this.#functions)) {
      let byValue = this.#index.get(name);
      if (!byValue) this.#index.set(name, (byValue = new Map()));
      let current = this.#indexed.get(name);
      if (!current) this.#indexed.set(name, (current = new Map()));
      for (const v of current.get(key) ?? []) {
        const set = byValue.get(v);
        set?.delete(key);
        if (set?.size === 0) byValue.delete(v);
      }
      if (event === 'delete') {
        current.delete(key);
        continue;
      }
      const values = valuesOf(obj);
      current.set(key, values);
      for (const v of values) {
        let set = byValue.get(v);
        if (!set) byValue.set(v, (set = new Map()));
        set.set(key, obj);
      }
    }
  }
}
