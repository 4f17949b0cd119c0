/**
 * The watch relay: lists and watches everything the controllers care about, maps each event to
 * controller keys and sends them, coalesced and batched, to the key queues. Long-running; holds
 * only small indexes. Several replicas may run: the queue drops their exact duplicates.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KeyQueue } from '../../shared/queue/port.ts';
import { VIEW_MAX_BYTES, type Controller, type KeyMessage } from '../../shared/queue/message.ts';
import { resourceName } from '../../shared/api/resources.ts';
import type { ControllerView } from '../../shared/reconcile/define-controller.ts';
import type { ViewAnswer } from '../../shared/relay/view.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { WAKES } from '../wakes.ts';
import { Outbox } from './outbox.ts';
import { KubevirtMetrics } from './metrics/route.ts';
import { workqueueAdds } from '../../shared/metrics/kubevirt/workqueue.ts';
import { Reflector, type ResourceWatch } from './reflector.ts';
import { unionOfWatches, watchedResources } from './resources.ts';
import { VIEW_SETTLE_MS, ViewStore } from './view-store.ts';
import type { EventMapper, EventType, KeyTarget, RelayRoute, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';
import { errorText } from '../../shared/errors.ts';

export interface RelayOptions {
  readonly kubeConfig: KubeConfig;
  readonly queue: Pick<KeyQueue, 'send'>;
  readonly log: Logger;
  readonly metrics?: MetricsRegistry;
  /** Prefix keys with a cluster id when one deployment serves several clusters. */
  readonly clusterId?: string;
  /**
   * What each controller watches and how its events map to keys, and what its messages carry;
   * default: every controller's wakes (functions/wakes.ts).
   */
  readonly routes?: readonly Route[];
  /** Override the watched resources (tests). */
  readonly resources?: ResourceWatch[];
  readonly batchSize?: number;
  readonly now?: () => number;
  /**
   * How long a watch must have been open before its copy counts as current whatever the versions
   * say (functions/relay/view-store.ts `consistent`); default VIEW_SETTLE_MS.
   */
  readonly viewSettleMs?: number;
  /** Whether we hold virt-controller's Lease, for KubeVirt's leading gauge (docs/cutover.md); absent: no cutover. */
  readonly holdsLease?: () => boolean | undefined;
  /** Sees every watched object's event (shadow mode's judge keeps their recent versions). */
  readonly observe?: (kind: WatchedKind, type: EventType, obj: WatchedObject) => void;
}

/** A controller's wakes as the relay takes them (tests may give a bare route). */
type Route = RelayRoute & { readonly controller?: Controller; readonly view?: ControllerView };

export class Relay {
  readonly metrics: MetricsRegistry;
  /** KubeVirt's virt-controller metrics on `metrics` (functions/relay/metrics/); none when `opts.routes` is given. */
  readonly kubevirtMetrics: KubevirtMetrics | undefined;
  readonly #reflectors: Reflector[];
  readonly #outbox: Outbox;
  readonly #opts: RelayOptions;
  readonly #mappers: readonly EventMapper[];
  /** The controllers whose messages carry a view, and the whole objects those views are made of. */
  readonly #views = new Map<Controller, ControllerView>();
  readonly #store: ViewStore | undefined;

  constructor(opts: RelayOptions) {
    this.#opts = opts;
    this.metrics = opts.metrics ?? new MetricsRegistry();
    this.kubevirtMetrics = opts.routes ? undefined : new KubevirtMetrics(this.metrics, () => this.ready, opts.holdsLease);
    const routes: readonly Route[] = opts.routes ?? [...WAKES, this.kubevirtMetrics!.route];
    const env = { now: opts.now ?? Date.now };
    this.#mappers = routes.map((r) => r.mapper(env));
    for (const r of routes) if (r.view && r.controller) this.#views.set(r.controller, r.view);
    this.#store = viewStoreFor(routes);
    this.#outbox = new Outbox(opts.queue, {
      log: opts.log,
      batchSize: opts.batchSize ?? 100,
      decorate: (m) => this.#withView(m),
      onSent: (msgs) => {
        for (const m of msgs) {
          this.metrics.inc('workqueue_adds_total', 'Keys sent to a controller queue', { name: m.controller });
          // KubeVirt's own name for the same count (kubevirt_workqueue_adds_total, its queue names).
          workqueueAdds(this.metrics, m.controller);
        }
      },
      onSendError: () => this.metrics.inc('relay_send_errors_total', 'Failed batch sends (retried)'),
    });
    const resources = opts.resources ?? watchedResources(opts.kubeConfig, routes);
    this.#reflectors = resources.map(
      (res) =>
        new Reflector(opts.kubeConfig, res, (type, obj, old) => this.#onEvent(res.kind, type, obj, old), {
          log: opts.log,
          onRestart: (why) => this.metrics.inc('relay_watch_restarts_total', 'List/watch restarts by cause', { kind: res.kind, why }),
          onProgress: (rv, watching) => this.#store?.progress(res.kind, rv, watching),
        }),
    );
  }

  start(): void {
    for (const r of this.#reflectors) r.start();
    this.kubevirtMetrics?.start();
  }

  /** Stops watching, then sends what is still pending. */
  async stop(): Promise<void> {
    this.kubevirtMetrics?.stop();
    await Promise.all(this.#reflectors.map((r) => r.stop()));
    await this.#outbox.close();
  }

  /**
   * Leaves the shared metrics registry as if this relay had never been there (its KubeVirt
   * collectors removed): for a relay replaced by another in the same process. A stopped relay
   * otherwise keeps reporting (leading 0) until its process ends, as it should.
   */
  detachMetrics(): void {
    this.kubevirtMetrics?.detach();
  }

  /** Ready once every resource has been listed once. */
  get ready(): boolean {
    return this.#reflectors.every((r) => r.synced);
  }

  /** Keys waiting to be sent. */
  get pending(): number {
    return this.#outbox.depth;
  }

  /** The kinds whose first list has not completed yet (readiness). */
  unsynced(): WatchedKind[] {
    return this.#reflectors.filter((r) => !r.synced).map((r) => r.kind);
  }

  /** The outbox's send health: keys waiting, and since when sends have been failing (epoch ms). */
  outboxHealth(): { pending: number; failures: number; failingSince: number | undefined } {
    return { pending: this.#outbox.depth, failures: this.#outbox.failures, failingSince: this.#outbox.failingSince };
  }

  /** Objects watched, over all resources. */
  get watchedObjects(): number {
    return this.#reflectors.reduce((n, r) => n + r.size, 0);
  }

  /**
   * Lists everything again and re-sends every object's keys: after the cutover makes us the
   * writer, every key is reconciled once by us, whatever happened while we were fenced.
   */
  resync(): void {
    for (const r of this.#reflectors) r.relist();
  }

  /** Drops every watch now (tests, chaos). Reflectors re-watch from where they were. */
  dropWatches(): void {
    for (const r of this.#reflectors) r.restartWatch();
  }

  /** `m` with its controller's view, when it has one and it fits (VIEW_MAX_BYTES). */
  #withView(m: KeyMessage): KeyMessage {
    const view = this.#views.get(m.controller);
    if (!view || !this.#store) return m;
    const prefix = this.#opts.clusterId ? `${this.#opts.clusterId}:` : '';
    const key = prefix && m.key.startsWith(prefix) ? m.key.slice(prefix.length) : m.key;
    const answers = view.reads(key, this.#store).map((r) => this.#store!.answer(r)).filter((a): a is ViewAnswer => a !== undefined);
    if (answers.length === 0) return m;
    // One watch may lag another (a dropped watch, a slow stream): a view whose answers are not all
    // as new as its newest object is not sent at all (the function reads from the API server).
    if (!this.#store.consistent(answers, (this.#opts.now ?? Date.now)(), this.#opts.viewSettleMs ?? VIEW_SETTLE_MS)) {
      this.metrics.inc('relay_views_behind_total', 'Keys sent without their view because one of its watches lagged behind its newest object', { name: m.controller });
      return m;
    }
    const bytes = JSON.stringify(answers).length;
    if (bytes > VIEW_MAX_BYTES) {
      this.metrics.inc('relay_views_too_large_total', 'Keys sent without their view because it would not fit a message', { name: m.controller });
      return m;
    }
    this.metrics.observe('relay_view_bytes', 'Size of the views the relay attached to keys', { name: m.controller }, bytes, [1024, 4096, 8192, 16384, 32768, 49152]);
    // The view last, its stamp last in it: the queue reads the stamp from the body's end when it
    // coalesces two messages of a key (shared/queue/coalesce.ts); another order only costs a parse.
    return { ...m, view: { reads: answers, taken: this.#store.stamp() } };
  }

  #onEvent(kind: WatchedKind, type: EventType, obj: WatchedObject, old: WatchedObject | undefined): void {
    this.metrics.inc('relay_events_total', 'Watch events seen', { kind, type });
    this.#store?.apply(kind, type, obj);
    this.#opts.observe?.(kind, type, obj);
    const targets: KeyTarget[] = [];
    for (const map of this.#mappers) {
      try {
        targets.push(...map(kind, type, obj, old));
      } catch (err) {
        // A malformed object must never stop the relay (nor another controller's mapping): log it and carry on.
        this.#opts.log.error('could not map event', { kind, type, name: obj?.metadata?.name, error: errorText(err) });
      }
    }
    const now = (this.#opts.now ?? Date.now)();
    const prefix = this.#opts.clusterId ? `${this.#opts.clusterId}:` : '';
    for (const t of targets) {
      const msg: KeyMessage = {
        v: 1,
        controller: t.controller,
        key: prefix + t.key,
        cause: {
          kind,
          namespace: obj.metadata?.namespace ?? '',
          name: obj.metadata?.name ?? '',
          uid: obj.metadata?.uid ?? '',
          resourceVersion: obj.metadata?.resourceVersion ?? '',
          event: type,
          seenAt: now,
        },
      };
      const hold = this.#store ? (this.#views.get(t.controller)?.holdMs?.(t.key, { kind, type, object: obj }, this.#store) ?? 0) : 0;
      this.#outbox.add(msg, hold);
    }
    this.metrics.set('relay_outbox_depth', 'Keys waiting to be sent', {}, this.#outbox.depth);
  }
}

/** The store of the resources the routes' views are made of, each with the selector the relay watches it with. */
function viewStoreFor(routes: readonly Route[]): ViewStore | undefined {
  const viewed = new Map(routes.flatMap((r) => r.view?.resources ?? []).map((res) => [resourceName(res), res]));
  if (viewed.size === 0) return undefined;
  const watches = new Map(unionOfWatches(routes).map((w) => [resourceName(w.res), w.labelSelector]));
  return new ViewStore([...viewed].map(([name, resource]) => ({ resource, watchSelector: watches.get(name) })));
}
