/**
 * The watch hub: turns store events into per-watcher watch events with the upstream
 * transition semantics (cacheWatcher.convertToWatchEvent): an object that starts matching the
 * watcher's namespace/label/field filter is ADDED, one that stops matching is DELETED (carrying
 * its previous state and the new RV), one that matches before and after is MODIFIED.
 * Replays history from a resourceVersion; 410 Expired as an ERROR event when it is too old.
 */
import { ApiError, expired, timeout } from './errors.ts';
import type { FieldSelector, LabelSelector } from './selectors.ts';
import { apiVersionOf, resourceKey, type ResourceInfo } from './resources.ts';
import type { Store, StoreEvent } from './store.ts';
import type { KubeObject } from './types.ts';

/** What a watcher wants to see. */
export interface WatchFilter {
  res: ResourceInfo;
  namespace?: string | undefined;
  label: LabelSelector;
  field: FieldSelector;
}

/** One event as a watcher gets it. */
export interface WireEvent {
  type: string;
  object: unknown;
}

/**
 * Where a watcher's events go (one JSON document per line). The hub hands every watcher of a
 * resource the same (frozen) event object for one store event and type, so a sink may encode an
 * event once and reuse the encoding for every watcher (http-handler.ts keys it on the object).
 */
export interface WatchSink {
  send(event: WireEvent): void;
  /** Ends the stream cleanly (end of response, never a socket reset). */
  end(): void;
}

/** Per-watch options from the query string. */
export interface WatchOptions {
  /** `undefined` = unset/empty/"0": start with synthetic ADDED events for current objects. */
  fromRv?: number | undefined;
  bookmarks?: boolean;
  /** `sendInitialEvents=true`: initial ADDED then a BOOKMARK marked initial-events-end. */
  sendInitialEvents?: boolean;
  timeoutMs?: number | undefined;
}

/** Server-wide watch settings. */
export interface WatchHubOptions {
  bookmarkIntervalMs: number;
  /** A watch from an RV newer than the store: wait this long, then 504 (or 410 with `tooLargeAsGone`). */
  tooLargeWaitMs: number;
  tooLargeAsGone: boolean;
}

/** Object as served on the wire: always with apiVersion/kind in watch events. */
export function withTypeMeta(res: ResourceInfo, obj: KubeObject): KubeObject {
  return { apiVersion: apiVersionOf(res), kind: res.kind, ...obj };
}

/**
 * Whether an object's first two fields are its apiVersion and kind — then it is as
 * {@link withTypeMeta} would make it (a field of the object wins over the spread's), and a watch
 * event can carry the stored object itself, whose encoding a write's answer shares (http-io.ts).
 */
function leadsWithTypeMeta(obj: KubeObject): boolean {
  let i = 0;
  for (const key in obj) {
    if (key !== (i === 0 ? 'apiVersion' : 'kind') || typeof obj[key] !== 'string') return false;
    if (++i === 2) return true;
  }
  return false;
}

function matches(f: WatchFilter, o: KubeObject | undefined): boolean {
  if (!o) return false;
  if (f.namespace && o.metadata.namespace !== f.namespace) return false;
  return f.label.matches(o.metadata.labels) && f.field.matches(o);
}

/** The event a watcher with filter `f` sees for store event `e`, if any. */
export function convertEvent(f: WatchFilter, e: StoreEvent): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject } | undefined {
  if (resourceKey(e.res) !== resourceKey(f.res)) return undefined;
  if (e.type === 'DELETED') return matches(f, e.prev) ? { type: 'DELETED', object: e.object } : undefined;
  const now = matches(f, e.object);
  const before = e.type === 'MODIFIED' && matches(f, e.prev);
  if (now && before) return { type: 'MODIFIED', object: e.object };
  if (now) return { type: 'ADDED', object: e.object };
  if (before) {
    // Stopped matching: DELETED with the previous state, stamped with this event's RV.
    const prev = structuredClone(e.prev!);
    prev.metadata.resourceVersion = String(e.rv);
    return { type: 'DELETED', object: prev };
  }
  return undefined;
}

interface Watcher {
  filter: WatchFilter;
  sink: WatchSink;
  stop(): void;
}

/** See the module comment. */
export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private readonly store: Store;
  readonly options: WatchHubOptions;

  constructor(store: Store, options: WatchHubOptions) {
    this.store = store;
    this.options = options;
    store.subscribe((e) => {
      // One wire event per store event and type, shared by every watcher that sees it as such:
      // a pod change that N watchers see costs one copy (and one encoding), not N.
      const shared = new Map<string, WireEvent>();
      for (const w of this.watchers) {
        const ev = convertEvent(w.filter, e);
        if (!ev) continue;
        if (ev.object !== e.object) {
          // A watcher-specific object (DELETED with the previous state): not shared.
          w.sink.send({ type: ev.type, object: withTypeMeta(w.filter.res, ev.object) });
          continue;
        }
        let wire = shared.get(ev.type);
        if (!wire) shared.set(ev.type, (wire = Object.freeze({ type: ev.type, object: leadsWithTypeMeta(ev.object) ? ev.object : withTypeMeta(e.res, ev.object) })));
        w.sink.send(wire);
      }
    });
  }

  /** Number of open watches. */
  get size(): number {
    return this.watchers.size;
  }

  /** Starts a watch; returns its stop function (idempotent). */
  open(filter: WatchFilter, sink: WatchSink, opts: WatchOptions): () => void {
    const timers: NodeJS.Timeout[] = [];
    let stopped = false;
    const watcher: Watcher = {
      filter,
      sink,
      stop: () => {
        if (stopped) return;
        stopped = true;
        for (const t of timers) clearTimeout(t);
        this.watchers.delete(watcher);
        sink.end();
      },
    };
    const fail = (err: ApiError): (() => void) => {
      // Upstream answers watch errors as 200 + one ERROR event, then closes the stream.
      sink.send({ type: 'ERROR', object: err.toStatus() });
      watcher.stop();
      return watcher.stop;
    };
    const bookmark = (initialEnd = false): void => {
      const metadata: Record<string, unknown> = { resourceVersion: String(this.store.currentRv()) };
      if (initialEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
      sink.send({ type: 'BOOKMARK', object: { kind: filter.res.kind, apiVersion: apiVersionOf(filter.res), metadata } });
    };

    const start = (): void => {
      if (stopped) return;
      if (opts.fromRv === undefined || opts.sendInitialEvents) {
        for (const o of this.store.scan(filter.res, filter.namespace)) {
          if (matches(filter, o)) sink.send({ type: 'ADDED', object: withTypeMeta(filter.res, o) });
        }
        if (opts.sendInitialEvents && opts.bookmarks) bookmark(true);
      } else {
        let events: StoreEvent[];
        try {
          events = this.store.eventsSince(opts.fromRv);
        } catch (err) {
          if (err instanceof ApiError) {
            fail(err);
            return;
          }
          throw err;
        }
        for (const e of events) {
          const ev = convertEvent(filter, e);
          if (ev) sink.send({ type: ev.type, object: withTypeMeta(filter.res, ev.object) });
        }
      }
      this.watchers.add(watcher);
      if (opts.bookmarks) {
        const t = setInterval(() => bookmark(), this.options.bookmarkIntervalMs);
        t.unref();
        timers.push(t);
      }
      if (opts.timeoutMs !== undefined) {
        // A bookmark shortly before the server-side timeout lets the client resume exactly.
        const t = setTimeout(() => {
          if (opts.bookmarks) bookmark();
          watcher.stop();
        }, opts.timeoutMs);
        t.unref();
        timers.push(t);
      }
    };

    if (opts.fromRv !== undefined && opts.fromRv > this.store.currentRv()) {
      const wanted = opts.fromRv;
      const current = this.store.currentRv();
      if (this.options.tooLargeAsGone) return fail(expired(wanted, this.store.oldestRv()));
      // Upstream waits ~3 s for the cache to catch up, then answers "Too large resource version".
      const unsubscribe = this.store.subscribe(() => {
        if (this.store.currentRv() >= wanted) {
          unsubscribe();
          clearTimeout(t);
          start();
        }
      });
      const t = setTimeout(() => {
        unsubscribe();
        fail(timeout(`Too large resource version: ${wanted}, current: ${current}`));
      }, this.options.tooLargeWaitMs);
      t.unref();
      timers.push(t);
      return watcher.stop;
    }
    start();
    return watcher.stop;
  }

  /** Ends every open watch cleanly (fault injection: "the watch dropped"). */
  dropAll(): number {
    const n = this.watchers.size;
    for (const w of [...this.watchers]) w.stop();
    return n;
  }
}
