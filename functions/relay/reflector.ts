/**
 * List + watch for one resource, written for the relay rather than client-node's informer: the
 * informer stops for good on list errors and connection loss, turns `stop()` into an error and
 * keeps full objects (docs/kube-client.md, "client-node as it behaves on the wire"). A reflector here never stops until told to: it
 * relists after 410 Gone or repeated failures, re-watches from the last resourceVersion after a
 * drop, backs off on errors, and reports every object it (re)lists so no key can be missed.
 */
import type { KubeConfig, Watch } from '@kubernetes/client-node';
import { watchClient } from '../../shared/kube/watch.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { EventType, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';
import { errorText } from '../../shared/errors.ts';

/** One page of a list. */
export interface ListPage {
  readonly items: readonly WatchedObject[];
  readonly resourceVersion: string;
  readonly continueToken?: string | undefined;
}

export interface ResourceWatch {
  readonly kind: WatchedKind;
  /** Watch path, e.g. `/api/v1/pods` (all namespaces). */
  readonly path: string;
  readonly labelSelector?: string;
  /** Lists one page (limit/continue) with the same selector as the watch. */
  list(limit: number, continueToken: string | undefined): Promise<ListPage>;
}

export type ReflectorHandler = (type: EventType, obj: WatchedObject, old: WatchedObject | undefined) => void;

/** What the reflector remembers per object: just enough to detect deletions and owner changes. */
interface Known {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly stub: WatchedObject;
}

export interface ReflectorOptions {
  readonly log: Logger;
  readonly pageSize?: number;
  /** Max backoff between failed attempts, ms. */
  readonly maxBackoffMs?: number;
  /** Called on every relist and watch restart (metrics). */
  readonly onRestart?: (why: 'relist' | 'rewatch' | 'error') => void;
  /**
   * Told how far the reflector's copy has come: the list's resourceVersion when a list completes,
   * each event's (bookmarks too) after it was delivered, and undefined while a relist runs (its
   * copy is then part old, part new: no version describes it); `watching` says whether a watch
   * stream is open (false from the moment one ends until the next is established).
   */
  readonly onProgress?: (resourceVersion: string | undefined, watching: boolean) => void;
}

class GoneError extends Error {}

/** The server-side timeout each watch asks for; the server then ends the stream (after a bookmark). */
export const WATCH_TIMEOUT_SECONDS = 300;
/**
 * How often an API server sends a bookmark to a watch that asked for them: kube-apiserver's watch
 * cache (`defaultBookmarkFrequency`, k8s.io/apiserver) and the sandbox's, once a minute.
 */
export const BOOKMARK_CADENCE_MS = 60_000;
/**
 * The longest silence a watch stream may keep before the reflector gives up on it: half again the
 * bookmark cadence, so that a quiet resource's bookmarks keep its watch open (client-node's own
 * 30 s cut every one of them, shared/kube/watch.ts), while a connection that died without closing
 * (a half-open TCP connection, a stalled proxy) is given up within 90 s rather than at the server's
 * 5-minute timeout. client-go learns the same from HTTP/2 pings; the relay's watches are HTTP/1.1.
 */
export const WATCH_INACTIVITY_MS = (BOOKMARK_CADENCE_MS * 3) / 2;

export class Reflector {
  readonly #res: ResourceWatch;
  readonly #watch: Watch;
  readonly #handle: ReflectorHandler;
  readonly #opts: ReflectorOptions;
  readonly #known = new Map<string, Known>();
  #running = false;
  #abort: AbortController | undefined;
  #wake: (() => void) | undefined;
  #synced = false;
  #loop: Promise<void> | undefined;
  #relistRequested = false;

  constructor(kc: KubeConfig, res: ResourceWatch, handle: ReflectorHandler, opts: ReflectorOptions) {
    this.#res = res;
    this.#watch = watchClient(kc, WATCH_INACTIVITY_MS);
    this.#handle = handle;
    this.#opts = opts;
  }

  /** The kind this reflector lists and watches. */
  get kind(): WatchedKind {
    return this.#res.kind;
  }

  /** True once the first full list has been delivered. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Objects currently known. */
  get size(): number {
    return this.#known.size;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#abort?.abort();
    this.#wake?.();
    await this.#loop;
  }

  /** Drops the current watch (tests, and a manual "relist now"). */
  restartWatch(): void {
    this.#abort?.abort();
  }

  /** Drops the current watch and lists everything again (every object is delivered as RELIST). */
  relist(): void {
    this.#relistRequested = true;
    this.#abort?.abort();
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (this.#running) {
      let rv: string;
      try {
        rv = await this.#relist();
        this.#opts.onRestart?.('relist');
        failures = 0;
      } catch (err) {
        failures++;
        this.#opts.log.warn('list failed, retrying', { kind: this.#res.kind, error: errorText(err), attempt: failures });
        this.#opts.onRestart?.('error');
        await this.#sleep(this.#backoff(failures));
        continue;
      }
      // Watch from the list's version until the history is gone or the watch keeps failing.
      let watchFailures = 0;
      while (this.#running) {
        if (this.#relistRequested) {
          this.#relistRequested = false;
          break;
        }
        try {
          rv = await this.#watchOnce(rv);
          watchFailures = 0;
          this.#opts.onRestart?.('rewatch');
        } catch (err) {
          if (err instanceof GoneError) break;
          watchFailures++;
          this.#opts.log.warn('watch failed', { kind: this.#res.kind, error: errorText(err), attempt: watchFailures });
          this.#opts.onRestart?.('error');
          // After a few failed re-watches, relist: events may have been compacted meanwhile.
          if (watchFailures >= 3) break;
          await this.#sleep(this.#backoff(watchFailures));
        }
      }
    }
  }

  /** Lists every page, reports each object (RELIST) and every vanished one (DELETED). */
  async #relist(): Promise<string> {
    const seen = new Set<string>();
    let token: string | undefined;
    let rv = '';
    this.#opts.onProgress?.(undefined, false);
    do {
      const page = await this.#res.list(this.#opts.pageSize ?? 500, token);
      rv = page.resourceVersion;
      token = page.continueToken || undefined;
      for (const obj of page.items) {
        const id = idOf(obj);
        seen.add(id);
        this.#deliver('RELIST', obj);
      }
    } while (token && this.#running);
    for (const [id, k] of [...this.#known]) {
      if (!seen.has(id)) {
        this.#known.delete(id);
        this.#handle('DELETED', k.stub, k.stub);
      }
    }
    this.#synced = true;
    this.#opts.onProgress?.(rv, false);
    return rv;
  }

  #watchOnce(rv: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let last = rv;
      let gone = false;
      let settled = false;
      const finish = (err: unknown) => {
        if (settled) return;
        settled = true;
        this.#opts.onProgress?.(last, false);
        if (gone) reject(new GoneError('resourceVersion too old'));
        else if (err && this.#running && !isAbort(err)) reject(err);
        else resolve(last);
      };
      const query: Record<string, string | boolean | number> = { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS };
      if (this.#res.labelSelector) query.labelSelector = this.#res.labelSelector;
      this.#watch
        .watch(
          this.#res.path,
          query,
          (type: string, obj: WatchedObject & { code?: number }) => {
            if (type === 'ERROR') {
              if (obj?.code === 410) gone = true;
              this.#abort?.abort();
              return;
            }
            const objRv = obj?.metadata?.resourceVersion;
            if (objRv) last = objRv;
            if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.#deliver(type, obj);
            if (objRv) this.#opts.onProgress?.(objRv, !settled);
          },
          (err: unknown) => {
            const status = (err as { statusCode?: number } | undefined)?.statusCode;
            if (status === 410) gone = true;
            finish(err);
          },
        )
        .then((ac) => {
          this.#abort = ac;
          if (!this.#running || settled) ac.abort();
          else this.#opts.onProgress?.(last, true);
        })
        .catch((err: unknown) => {
          const status = (err as { statusCode?: number; code?: number } | undefined)?.statusCode ?? (err as { code?: number }).code;
          if (status === 410) gone = true;
          finish(err);
        });
    });
  }

  #deliver(type: EventType, obj: WatchedObject): void {
    const id = idOf(obj);
    const before = this.#known.get(id);
    if (type === 'DELETED') this.#known.delete(id);
    else {
      // Same object, same version, seen again (relist): still delivered, as RELIST, so the key is re-sent.
      this.#known.set(id, { uid: obj.metadata?.uid ?? '', resourceVersion: obj.metadata?.resourceVersion ?? '', stub: stubOf(obj) });
    }
    const t: EventType = type === 'RELIST' && !before ? 'ADDED' : type === 'RELIST' ? 'RELIST' : type;
    this.#handle(t === 'ADDED' && type === 'RELIST' ? 'RELIST' : t, obj, before?.stub);
  }

  #backoff(n: number): number {
    return Math.min(this.#opts.maxBackoffMs ?? 30_000, 100 * 2 ** Math.min(n, 10)) * (0.5 + Math.random() / 2);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}

function idOf(obj: WatchedObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** Only the metadata the mapping reads of an old object: owners, annotations, labels. */
export function stubOf(obj: WatchedObject): WatchedObject {
  const m = obj.metadata ?? {};
  const meta: NonNullable<WatchedObject['metadata']> = {};
  if (m.name !== undefined) meta.name = m.name;
  if (m.namespace !== undefined) meta.namespace = m.namespace;
  if (m.uid !== undefined) meta.uid = m.uid;
  if (m.resourceVersion !== undefined) meta.resourceVersion = m.resourceVersion;
  if (m.ownerReferences) meta.ownerReferences = m.ownerReferences.map((r) => ({ kind: r.kind, name: r.name, uid: r.uid, controller: r.controller }) as never);
  if (m.annotations) meta.annotations = m.annotations;
  if (m.labels) meta.labels = m.labels;
  return { metadata: meta };
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || /aborted/i.test(err.message));
}

