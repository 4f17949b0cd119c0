/**
 * One informer per watched collection for the whole node side, as client-go's shared informer
 * factory gives the controllers of one kube-controller-manager or kubelet: the kubelet, the
 * scheduler and virt-handler each watched every pod (and the kubelet and virt-handler every VMI)
 * through an informer of their own, so the API server wrote each event to three connections and
 * this process parsed it three times. Now each (path, selectors) is listed and watched once; every
 * component that asks for it gets a view with its own handler and its own named indexes.
 *
 * A view behaves as the component's own informer did: `start()` delivers an `add` for every
 * object already cached (as a first list would), events reach it only between `start()` and
 * `stop()`, and the watch ends when the last view stops. `where` narrows a view to the objects it
 * accepts — a label selector applied on our side of a shared watch (virt-handler's launcher pods):
 * an object that stops matching is a `delete` to that view, one that starts matching an `add`.
 * Views share the cached objects, so (as always) nothing may change what it reads.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ObjectIndexes } from './object-indexes.ts';
import { WatchedCache, type CacheEvent, type WatchedCacheOptions } from './watched-cache.ts';
import { keyOf, type KubeObject } from './objects.ts';

/** What a component reads from its informer. */
export interface Informer<T extends KubeObject> {
  /** Joins the shared informer (listing and watching if it is the first); resolves once it has listed. */
  start(): Promise<void>;
  /** Leaves it; no callback of this view runs after this resolves. */
  stop(): Promise<void>;
  /** True once a list has succeeded. */
  readonly synced: boolean;
  /** How many times the shared informer had to be restarted after an error. */
  readonly restarts: number;
  get(namespace: string, name: string): T | undefined;
  list(namespace?: string): readonly T[];
  /** The objects found under `value` in index `name` (declared in the options). */
  byIndex(name: string, value: string): readonly T[];
}

/**
 * A view's informer: the collection as {@link WatchedCache} takes it (the first view's `list` is
 * the shared one's), this view's handler and indexes, and what it accepts.
 */
export interface InformerOptions<T extends KubeObject> extends Omit<WatchedCacheOptions<T>, 'kc' | 'restartDelayMs'> {
  /** Only objects this accepts are seen by the view (see the module comment). */
  where?: (obj: T) => boolean;
}

interface Shared {
  cache: WatchedCache<KubeObject>;
  views: Set<View<KubeObject>>;
  started?: Promise<void>;
}

/** The node side's informers, one per (path, label selector, field selector). */
export class SharedInformers {
  readonly #kc: KubeConfig;
  readonly #shared = new Map<string, Shared>();

  constructor(kc: KubeConfig) {
    this.#kc = kc;
  }

  /** A view of the shared informer for `opts.path` and selectors; it does nothing until `start()`. */
  informer<T extends KubeObject>(opts: InformerOptions<T>): Informer<T> {
    return new View<T>(opts, (view) => this.#join(opts, view as unknown as View<KubeObject>), (view) => this.#leave(opts, view as unknown as View<KubeObject>));
  }

  /** How many collections are watched now (one per path and selectors, however many views). */
  get watched(): number {
    return this.#shared.size;
  }

  async #join(opts: Collection, view: View<KubeObject>): Promise<WatchedCache<KubeObject>> {
    const key = keyFor(opts);
    let shared = this.#shared.get(key);
    if (!shared) {
      const views = new Set<View<KubeObject>>();
      const cache = new WatchedCache<KubeObject>({
        kc: this.#kc,
        path: opts.path,
        list: opts.list,
        ...(opts.labelSelector !== undefined ? { labelSelector: opts.labelSelector } : {}),
        ...(opts.fieldSelector !== undefined ? { fieldSelector: opts.fieldSelector } : {}),
        onEvent: (event, obj) => {
          // Every view's indexes first: a handler may read another index of its own component.
          for (const v of views) v.deliver(event, obj);
          for (const v of views) v.notify();
        },
        onError: (err) => {
          for (const v of views) v.failed(err);
        },
      });
      shared = { cache, views };
      this.#shared.set(key, shared);
    }
    shared.views.add(view);
    await (shared.started ??= shared.cache.start());
    return shared.cache;
  }

  async #leave(opts: Collection, view: View<KubeObject>): Promise<void> {
    const key = keyFor(opts);
    const shared = this.#shared.get(key);
    if (!shared?.views.delete(view) || shared.views.size > 0) return;
    this.#shared.delete(key);
    await shared.cache.stop();
  }
}

/** What a shared informer lists and watches. */
type Collection = Pick<InformerOptions<KubeObject>, 'path' | 'list' | 'labelSelector' | 'fieldSelector'>;

function keyFor(opts: Collection): string {
  return JSON.stringify([opts.path, opts.labelSelector ?? '', opts.fieldSelector ?? '']);
}

/** One component's view of a shared informer. */
class View<T extends KubeObject> implements Informer<T> {
  readonly #opts: InformerOptions<T>;
  readonly #join: (view: View<T>) => Promise<WatchedCache<KubeObject>>;
  readonly #leave: (view: View<T>) => Promise<void>;
  readonly #indexes: ObjectIndexes<T> | undefined;
  /** With `where`: the keys of the objects this view sees now. */
  readonly #visible = new Set<string>();
  #cache: WatchedCache<KubeObject> | undefined;
  #active = false;
  /** The event the shared informer's current callback brought, until `notify()` hands it on. */
  #pending: { event: CacheEvent; obj: T } | undefined;

  constructor(opts: InformerOptions<T>, join: (view: View<T>) => Promise<WatchedCache<KubeObject>>, leave: (view: View<T>) => Promise<void>) {
    this.#opts = opts;
    this.#join = join;
    this.#leave = leave;
    this.#indexes = opts.indexes ? new ObjectIndexes(opts.indexes, `informer ${opts.path}`) : undefined;
  }

  async start(): Promise<void> {
    const cache = await this.#join(this);
    // Synchronously from here: no event can come between the replay and going live, and every
    // event before it is in what is replayed.
    this.#cache = cache;
    this.#indexes?.clear();
    this.#visible.clear();
    this.#active = true;
    for (const obj of cache.list()) {
      this.deliver('add', obj);
      this.notify();
    }
  }

  async stop(): Promise<void> {
    this.#active = false;
    this.#pending = undefined;
    await this.#leave(this);
  }

  get synced(): boolean {
    return this.#cache?.synced ?? false;
  }

  get restarts(): number {
    return this.#cache?.restarts ?? 0;
  }

  get(namespace: string, name: string): T | undefined {
    const obj = this.#cache?.get(namespace, name) as T | undefined;
    return obj && (!this.#opts.where || this.#opts.where(obj)) ? obj : undefined;
  }

  list(namespace?: string): readonly T[] {
    const all = (this.#cache?.list(namespace) ?? []) as readonly T[];
    const where = this.#opts.where;
    return where ? all.filter((o) => where(o)) : all;
  }

  byIndex(name: string, value: string): readonly T[] {
    if (!this.#indexes) throw new Error(`informer ${this.#opts.path}: no index ${name}`);
    return this.#indexes.byIndex(name, value);
  }

  /** Takes the shared informer's event in: this view's indexes now, its handler at `notify()`. */
  deliver(event: CacheEvent, raw: KubeObject): void {
    if (!this.#active) return;
    const obj = raw as T;
    let seen: CacheEvent = event;
    if (this.#opts.where) {
      const key = keyOf(obj);
      const was = this.#visible.has(key);
      const is = event !== 'delete' && this.#opts.where(obj);
      if (!is && !was) return;
      if (is) this.#visible.add(key);
      else this.#visible.delete(key);
      seen = !is ? 'delete' : was ? 'update' : 'add';
    }
    this.#indexes?.update(seen, obj);
    this.#pending = { event: seen, obj };
  }

  notify(): void {
    const p = this.#pending;
    this.#pending = undefined;
    if (p && this.#active) this.#opts.onEvent(p.event, p.obj);
  }

  failed(err: unknown): void {
    if (this.#active) this.#opts.onError?.(err);
  }
}
