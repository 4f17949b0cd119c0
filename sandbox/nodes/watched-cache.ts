/**
 * A client-node informer that keeps going: the simulated node side must survive watch drops,
 * 410 Gone and API server errors, and must stop cleanly when asked.
 *
 * client-node 2.0.1's `ListWatch` relists on 410 by itself, but it *stops* on a failed list, an
 * HTTP error on the watch and a dropped connection, and it reports `stop()` as an `error`
 * (docs/kube-client.md, "client-node as it behaves on the wire"). So: restart from `error` with a bounded real-time backoff, guarded by our
 * own `stopped` flag so `stop()` never turns into a restart.
 *
 * And its re-watch after a watch that ended cleanly (the server closed it) waits 1 s, doubling up
 * to 30 s, and starts again from 0 only when an event arrives. A quiet informer whose watch is
 * dropped every few seconds (the chaos suite's fault loop) thus reached the 30 s cap and saw
 * nothing for up to 30 s of wall time at a stretch — a kubelet that started a pod, a virt-handler
 * that moved a migration on, once per 30 s (150 sandbox seconds at 5×): the drain/upgrade chaos
 * run's stall. client-go's reflector, which a kubelet and virt-handler run, re-watches at once
 * after a clean end (its backoff is for failed list/watch calls, which here go through
 * `#restartLater`), so the delay is capped at {@link REWATCH_DELAY_CAP_MS}.
 */
import { ListWatch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { watchClient } from '../../shared/kube/watch.ts';
import type { KubeObject } from './objects.ts';
import { ObjectIndexes, type IndexFunctions } from './object-indexes.ts';

/**
 * The longest wait before re-watching after a watch ended cleanly: short enough that a dropped
 * watch costs the node side nothing it would notice, long enough that a server closing every
 * watch at once cannot make it spin.
 */
export const REWATCH_DELAY_CAP_MS = 100;

/**
 * The silence a node-side watch accepts: `ListWatch` asks for no bookmarks and no timeout, so the
 * API server ends its watches after 30–60 min (kube-apiserver's and the sandbox's range), and a
 * quiet resource sends nothing in between. client-node's
 * 30 s limit re-watched each of those every 30 s (shared/kube/watch.ts).
 */
export const NODE_WATCH_INACTIVITY_MS = 61 * 60 * 1000;

/** What a list function returns: items as plain JSON plus the list's resourceVersion. */
export interface RawList<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

/** What changed; `obj` is the new state (or the last state for `delete`). */
export type CacheEvent = 'add' | 'update' | 'delete';

export interface WatchedCacheOptions<T extends KubeObject> {
  kc: KubeConfig;
  /** Collection path, e.g. `/api/v1/pods`. */
  path: string;
  /** Lists with the same selectors as the watch. */
  list: () => Promise<RawList<T>>;
  labelSelector?: string;
  fieldSelector?: string;
  onEvent: (event: CacheEvent, obj: T) => void;
  /** Called with each error that made the informer restart (for logs). */
  onError?: (err: unknown) => void;
  /** First restart delay in real ms (doubles up to 5 s); default 100. */
  restartDelayMs?: number;
  /**
   * Secondary indexes, kept up to date before `onEvent` runs: index name → the values an object
   * is found under (e.g. the uid of its owning VMI). {@link WatchedCache.byIndex} reads them, so
   * "the pods of this VMI" costs the pods found, not a scan of every pod.
   */
  indexes?: IndexFunctions<T>;
}

/**
 * Drops `metadata.managedFields` from an object just decoded for the cache, as the informers of
 * kube-scheduler and kube-controller-manager do (client-go's `TransformStripManagedFields`):
 * nothing on the node side reads them, and they were a large part of every cached pod and VMI —
 * heap the garbage collector walked on every full collection. A write that sends no
 * managedFields keeps the stored ones (the API server's rule), so an update built from a cached
 * object loses nothing.
 */
function withoutManagedFields<T>(obj: T): T {
  const md = (obj as { metadata?: { managedFields?: unknown } } | undefined)?.metadata;
  if (md && md.managedFields !== undefined) delete md.managedFields;
  return obj;
}

/** A started, self-healing informer with a read-only cache. */
export class WatchedCache<T extends KubeObject> {
  readonly #informer: ListWatch<KubernetesObject>;
  readonly #opts: WatchedCacheOptions<T>;
  #stopped = true;
  #delayMs: number;
  #timer: NodeJS.Timeout | undefined;
  #synced = false;
  /** How many times the informer had to be restarted after an error. */
  restarts = 0;
  readonly #indexes: ObjectIndexes<T> | undefined;

  constructor(opts: WatchedCacheOptions<T>) {
    this.#opts = opts;
    this.#delayMs = opts.restartDelayMs ?? 100;
    this.#indexes = opts.indexes ? new ObjectIndexes(opts.indexes, `WatchedCache ${opts.path}`) : undefined;
    const list = async () => {
      const l = await opts.list();
      this.#synced = true;
      for (const item of l.items) withoutManagedFields(item);
      return l as unknown as { items: KubernetesObject[]; metadata?: { resourceVersion?: string } };
    };
    const rewatchDelay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.min(ms, REWATCH_DELAY_CAP_MS)).unref());
    const watch = watchClient(opts.kc, NODE_WATCH_INACTIVITY_MS);
    const watchOnce = watch.watch.bind(watch);
    watch.watch = (path, query, callback, done) => watchOnce(path, query, (phase, obj: unknown, raw?: unknown) => callback(phase, withoutManagedFields(obj), raw), done);
    this.#informer = new ListWatch(opts.path, watch, list, false, opts.labelSelector, opts.fieldSelector, { delayFn: rewatchDelay });
    // Why the stopped guard on every callback: a reconnect waiting for headers is not aborted by
    // stop() and may still deliver events afterwards (docs/kube-client.md, "client-node as it behaves on the wire").
    const forward = (event: CacheEvent) => (obj: KubernetesObject) => {
      this.#indexes?.update(event, obj as unknown as T);
      if (!this.#stopped) opts.onEvent(event, obj as unknown as T);
    };
    this.#informer.on('add', forward('add'));
    this.#informer.on('update', forward('update'));
    this.#informer.on('delete', forward('delete'));
    this.#informer.on('connect', () => {
      // A successful (re)connect after a list means the backoff can start small again.
      if (this.#synced) this.#delayMs = opts.restartDelayMs ?? 100;
    });
    this.#informer.on('error', (err: unknown) => this.#restartLater(err));
  }

  /** Lists and starts watching; resolves once the first list has been attempted. */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#informer.start();
  }

  /** True once a list has succeeded. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Stops for good; no callback runs after this resolves. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#informer.stop();
  }

  get(namespace: string, name: string): T | undefined {
    return this.#informer.get(name, namespace || undefined) as unknown as T | undefined;
  }

  list(namespace?: string): readonly T[] {
    return this.#informer.list(namespace) as unknown as readonly T[];
  }

  /** The cached objects found under `value` in index `name` (declared in the options). */
  byIndex(name: string, value: string): readonly T[] {
    if (!this.#indexes) throw new Error(`WatchedCache ${this.#opts.path}: no index ${name}`);
    return this.#indexes.byIndex(name, value);
  }

  #restartLater(err: unknown): void {
    if (this.#stopped || this.#timer) return;
    this.restarts++;
    this.#opts.onError?.(err);
    const delay = this.#delayMs;
    this.#delayMs = Math.min(this.#delayMs * 2, 5000);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      // start() resumes the watch from the last resourceVersion (or relists after a 410).
      this.#informer.start().catch((e: unknown) => this.#restartLater(e));
    }, delay);
    this.#timer.unref();
  }
}
