/**
 * The watch relay: lists and watches everything the controllers care about, maps each event to
 * controller keys and sends them, coalesced and batched, to the key queues. Long-running; holds
 * only small indexes. Several replicas may run: the queue drops their exact duplicates.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KeyQueue } from '../../shared/queue/port.ts';
import type { KeyMessage } from '../../shared/queue/message.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { WAKES } from '../wakes.ts';
import { Outbox } from './outbox.ts';
import { KubevirtMetrics } from './metrics/route.ts';
import { workqueueAdds } from '../../shared/metrics/kubevirt/workqueue.ts';
import { Reflector, type ResourceWatch } from './reflector.ts';
import { watchedResources } from './resources.ts';
import type { EventMapper, EventType, KeyTarget, RelayRoute, WatchedKind, WatchedObject } from '../../shared/relay/route.ts';
import { errorText } from '../../shared/errors.ts';

export interface RelayOptions {
  readonly kubeConfig: KubeConfig;
  readonly queue: Pick<KeyQueue, 'send'>;
  readonly log: Logger;
  readonly metrics?: MetricsRegistry;
  /** Prefix keys with a cluster id when one deployment serves several clusters. */
  readonly clusterId?: string;
  /** What each controller watches and how its events map to keys; default: every controller's wakes (functions/wakes.ts). */
  readonly routes?: readonly RelayRoute[];
  /** Override the watched resources (tests). */
  readonly resources?: ResourceWatch[];
  readonly batchSize?: number;
  readonly now?: () => number;
  /** Whether we hold virt-controller's Lease, for KubeVirt's leading gauge (docs/cutover.md); absent: no cutover. */
  readonly holdsLease?: () => boolean | undefined;
  /** Sees every watched object's event (shadow mode's judge keeps their recent versions). */
  readonly observe?: (kind: WatchedKind, type: EventType, obj: WatchedObject) => void;
}

export class Relay {
  readonly metrics: MetricsRegistry;
  /** KubeVirt's virt-controller metrics on `metrics` (functions/relay/metrics/); none when `opts.routes` is given. */
  readonly kubevirtMetrics: KubevirtMetrics | undefined;
  readonly #reflectors: Reflector[];
  readonly #outbox: Outbox;
  readonly #opts: RelayOptions;
  readonly #mappers: readonly EventMapper[];

  constructor(opts: RelayOptions) {
    this.#opts = opts;
    this.metrics = opts.metrics ?? new MetricsRegistry();
    this.kubevirtMetrics = opts.routes ? undefined : new KubevirtMetrics(this.metrics, () => this.ready, opts.holdsLease);
    const routes = opts.routes ?? [...WAKES, this.kubevirtMetrics!.route];
    const env = { now: opts.now ?? Date.now };
    this.#mappers = routes.map((r) => r.mapper(env));
    this.#outbox = new Outbox(opts.queue, {
      log: opts.log,
      batchSize: opts.batchSize ?? 100,
      onSent: (msgs) => {
        for (const m of msgs) this.metrics.inc('workqueue_adds_total', 'Keys sent to a controller queue', { name: m.controller });
        for (const m of msgs) workqueueAdds(this.metrics, m.controller);
      },
      onSendError: () => this.metrics.inc('relay_send_errors_total', 'Failed batch sends (retried)'),
    });
    const resources = opts.resources ?? watchedResources(opts.kubeConfig, routes);
    this.#reflectors = resources.map(
      (res) =>
        new Reflector(opts.kubeConfig, res, (type, obj, old) => this.#onEvent(res.kind, type, obj, old), {
          log: opts.log,
          onRestart: (why) => this.metrics.inc('relay_watch_restarts_total', 'List/watch restarts by cause', { kind: res.kind, why }),
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

  #onEvent(kind: WatchedKind, type: EventType, obj: WatchedObject, old: WatchedObject | undefined): void {
    this.metrics.inc('relay_events_total', 'Watch events seen', { kind, type });
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
      this.#outbox.add(msg);
    }
    this.metrics.set('relay_outbox_depth', 'Keys waiting to be sent', {}, this.#outbox.depth);
  }
}
