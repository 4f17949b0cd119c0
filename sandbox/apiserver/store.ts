/**
 * The object store: current objects per resource, one global monotonic resourceVersion (like the
 * etcd revision), and a bounded event history that watches replay from and that "exact" reads
 * are reconstructed from. Every write goes through {@link Store.put} / {@link Store.remove}, which
 * stamp a new RV and notify subscribers (watch hub, audit log, garbage collector) synchronously.
 *
 * Stored objects are immutable: readers (watch events, lists, the audit log, write paths that
 * build the next version from the stored one and share its unchanged subtrees) hold them without
 * copies. `freeze` (default on; the benchmarks turn it off for speed) deep-freezes every object
 * written, so a mutation of one throws instead of changing what every other reader sees.
 */
import { expired } from './errors.ts';
import { resourceKey, type ResourceInfo } from './resources.ts';
import { deepFreeze, type KubeObject } from './types.ts';

/** Who caused a write: recorded in the audit log. */
export interface WriteContext {
  /** Who authenticated (the bearer token): what counters and the audit's `identity` record. */
  identity: string;
  verb: string;
  subresource?: string;
  /** The user the request acted as (`Impersonate-User`), as kube-apiserver's audit `impersonatedUser`. */
  impersonatedUser?: string;
}

/** One committed change. `object` is the state after (for DELETED: the last state, new RV). */
export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rv: number;
  res: ResourceInfo;
  object: KubeObject;
  prev?: KubeObject;
  ctx: WriteContext;
}

// Why a process-wide counter seeded from wall time (×1000): RVs must never be reused across
// emulator restarts within a test run, because clients keep RVs across reconnects (kube-api C10).
let lastIssuedRv = 0;
function baseRv(): number {
  lastIssuedRv = Math.max(lastIssuedRv, Date.now() * 1000);
  return lastIssuedRv;
}

function objectKey(ns: string | undefined, name: string): string {
  return ns ? `${ns}/${name}` : name;
}

/** See the module comment. */
export class Store {
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  /** Per resource: `key=value` of a label → the keys of the objects carrying it. */
  private readonly labelIndex = new Map<string, Map<string, Set<string>>>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private rv: number;
  /** Events at or below this RV are no longer in the history. */
  private compactedThrough: number;
  historySize: number;
  readonly #freeze: boolean;

  constructor(historySize = 1000, opts: { freeze?: boolean } = {}) {
    this.historySize = historySize;
    this.#freeze = opts.freeze ?? true;
    this.rv = baseRv();
    this.compactedThrough = this.rv;
  }

  /** The current global resourceVersion. */
  currentRv(): number {
    return this.rv;
  }

  /** The oldest RV a watch or exact read can still start from. */
  oldestRv(): number {
    return this.compactedThrough;
  }

  private bucket(res: ResourceInfo): Map<string, KubeObject> {
    const key = resourceKey(res);
    let b = this.objects.get(key);
    if (!b) this.objects.set(key, (b = new Map()));
    return b;
  }

  /** The stored object itself, not a copy: callers must never mutate it. */
  peek(res: ResourceInfo, ns: string | undefined, name: string): KubeObject | undefined {
    return this.bucket(res).get(objectKey(ns, name));
  }

  private labelsOf(res: ResourceInfo): Map<string, Set<string>> {
    const key = resourceKey(res);
    let m = this.labelIndex.get(key);
    if (!m) this.labelIndex.set(key, (m = new Map()));
    return m;
  }

  private indexLabels(res: ResourceInfo, k: string, prev: KubeObject | undefined, next: KubeObject | undefined): void {
    const index = this.labelsOf(res);
    for (const [lk, lv] of Object.entries(prev?.metadata.labels ?? {})) {
      if (next?.metadata.labels?.[lk] === lv) continue;
      const set = index.get(`${lk}=${lv}`);
      set?.delete(k);
      if (set?.size === 0) index.delete(`${lk}=${lv}`);
    }
    for (const [lk, lv] of Object.entries(next?.metadata.labels ?? {})) {
      const set = index.get(`${lk}=${lv}`);
      if (set) set.add(k);
      else index.set(`${lk}=${lv}`, new Set([k]));
    }
  }

  /**
   * Stored objects (not copies) of a resource, optionally one namespace, in key order.
   * `equalities` (a selector's `key=value` requirements) narrow the walk to the objects carrying
   * the rarest of those labels, through the label index: a list of one VMI's pods costs its pods,
   * not every pod (`keep` must still check the whole selector).
   */
  scan(res: ResourceInfo, ns?: string, keep?: (o: KubeObject) => boolean, equalities: readonly (readonly [string, string])[] = []): KubeObject[] {
    // Filter first, then sort only what is kept: a label-selected list of a few pods must not pay
    // for sorting every pod in the namespace.
    const out: { k: string; o: KubeObject }[] = [];
    const bucket = this.bucket(res);
    let walk: Iterable<KubeObject> = bucket.values();
    if (equalities.length > 0) {
      const index = this.labelsOf(res);
      let rarest: Set<string> | undefined;
      for (const [lk, lv] of equalities) {
        const set = index.get(`${lk}=${lv}`) ?? new Set<string>();
        if (!rarest || set.size < rarest.size) rarest = set;
      }
      walk = [...rarest!].map((k) => bucket.get(k)!).filter((o) => o !== undefined);
    }
    for (const o of walk) {
      if ((!ns || o.metadata.namespace === ns) && (!keep || keep(o))) out.push({ k: objectKey(o.metadata.namespace, o.metadata.name!), o });
    }
    return out.sort((a, b) => (a.k < b.k ? -1 : 1)).map((e) => e.o);
  }

  /** The objects of a resource as they were at `rv` (410 when history no longer reaches it). */
  scanAt(res: ResourceInfo, ns: string | undefined, rv: number): KubeObject[] {
    if (rv >= this.rv) return this.scan(res, ns);
    if (rv < this.compactedThrough) throw expired(rv, this.compactedThrough);
    const state = new Map<string, KubeObject>();
    for (const o of this.scan(res, ns)) state.set(objectKey(o.metadata.namespace, o.metadata.name!), o);
    const key = resourceKey(res);
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv; i--) {
      const e = this.history[i]!;
      if (resourceKey(e.res) !== key || (ns && e.object.metadata.namespace !== ns)) continue;
      const k = objectKey(e.object.metadata.namespace, e.object.metadata.name!);
      if (e.type === 'ADDED') state.delete(k);
      else state.set(k, e.prev!);
    }
    return [...state.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, o]) => o);
  }

  /**
   * Stores `obj` under a new RV and returns it. `obj` and its metadata are the caller's to give
   * away (the RV is stamped in them); below that it may share subtrees with stored objects. From
   * here on it is immutable (frozen with `freeze`).
   */
  put(res: ResourceInfo, obj: KubeObject, ctx: WriteContext): KubeObject {
    const b = this.bucket(res);
    const k = objectKey(obj.metadata.namespace, obj.metadata.name!);
    const prev = b.get(k);
    const rv = ++this.rv;
    lastIssuedRv = Math.max(lastIssuedRv, rv);
    obj.metadata.resourceVersion = String(rv);
    if (this.#freeze) deepFreeze(obj);
    b.set(k, obj);
    this.indexLabels(res, k, prev, obj);
    this.emit(prev ? { type: 'MODIFIED', rv, res, object: obj, prev, ctx } : { type: 'ADDED', rv, res, object: obj, ctx });
    return obj;
  }

  /** Removes an object; the DELETED event carries its last state stamped with the new RV. */
  remove(res: ResourceInfo, ns: string | undefined, name: string, ctx: WriteContext): KubeObject | undefined {
    const b = this.bucket(res);
    const k = objectKey(ns, name);
    const prev = b.get(k);
    if (!prev) return undefined;
    b.delete(k);
    this.indexLabels(res, k, prev, undefined);
    const rv = ++this.rv;
    lastIssuedRv = Math.max(lastIssuedRv, rv);
    const last: KubeObject = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rv) } };
    if (this.#freeze) deepFreeze(last);
    this.emit({ type: 'DELETED', rv, res, object: last, prev, ctx });
    return last;
  }

  /** History events after `rv` (410 when some of them were compacted away). */
  eventsSince(rv: number): StoreEvent[] {
    if (rv < this.compactedThrough) throw expired(rv, this.compactedThrough);
    let i = this.history.length;
    while (i > 0 && this.history[i - 1]!.rv > rv) i--;
    return this.history.slice(i);
  }

  /** Drops all but the newest `keep` history events (test hook: makes old RVs answer 410). */
  compact(keep = 0): void {
    while (this.history.length > keep) this.compactedThrough = this.history.shift()!.rv;
    if (keep === 0) this.compactedThrough = this.rv;
  }

  /** Calls `fn` synchronously after every committed change; returns the unsubscribe function. */
  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    if (this.history.length > this.historySize) this.compactedThrough = this.history.shift()!.rv;
    for (const fn of this.listeners) fn(e);
  }
}
