/**
 * The yardstick: an in-process, client-go-style VMI controller — list+watch reflectors feed an
 * in-memory rate-limited workqueue (coalescing, per-key serialization), N workers call the SAME
 * instrumented VMI reconcile the serverless path runs, with expectations held in memory as
 * KubeVirt does. What it does not have is exactly what the serverless path adds: the relay's
 * outbox, the durable queue, the table.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { isPermanent } from '../../../shared/errors.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { Logger } from '../../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { KeyMessage } from '../../../shared/queue/message.ts';
import { cachedClusterConfig } from '../../../shared/reconcile/cluster-config-cache.ts';
import { instrumented } from '../../../shared/reconcile/instrument.ts';
import { RelayIndexes } from '../../../functions/relay/indexes.ts';
import { mapEvent } from '../../../functions/relay/map-event.ts';
import { Reflector } from '../../../functions/relay/reflector.ts';
import { relayRoutes } from '../../../functions/registry.ts';
import { watchedResources } from '../../../functions/relay/resources.ts';
import { vmiController } from '../../../functions/vmi/controller.ts';
import { MemoryExpectations } from './memory-expectations.ts';
import { RateLimitedWorkqueue } from './workqueue.ts';

export interface BaselineOptions {
  readonly kubeConfig: KubeConfig;
  /** The client the reconciles use (the caller may wrap it, e.g. to time calls). */
  readonly kube: KubeClient;
  readonly log: Logger;
  /** KubeVirt's VMI controller runs 10 workers. */
  readonly workers?: number;
}

export class BaselineController {
  readonly metrics = new MetricsRegistry();
  readonly queue = new RateLimitedWorkqueue<KeyMessage>();
  readonly #reflectors: Reflector[];
  readonly #indexes = new RelayIndexes();
  readonly #handle: ReturnType<typeof instrumented>;
  readonly #opts: BaselineOptions;
  #loops: Promise<void>[] = [];

  constructor(opts: BaselineOptions) {
    this.#opts = opts;
    const spec = vmiController({ expectations: new MemoryExpectations(), clusterConfig: cachedClusterConfig(opts.kube), log: opts.log });
    this.#handle = instrumented(spec, { kube: opts.kube, metrics: this.metrics, log: opts.log });
    this.#reflectors = watchedResources(opts.kubeConfig, relayRoutes()).map(
      (res) =>
        new Reflector(
          opts.kubeConfig,
          res,
          (type, obj, old) => {
            // Event handlers only map events to keys (the relay's own mapping, no outbox).
            for (const t of mapEvent(res.kind, type, obj, this.#indexes, old)) {
              if (t.controller !== 'vmi') continue;
              const md = obj.metadata ?? {};
              this.queue.add(t.key, {
                v: 1,
                controller: 'vmi',
                key: t.key,
                cause: { kind: res.kind, namespace: md.namespace ?? '', name: md.name ?? '', uid: md.uid ?? '', resourceVersion: md.resourceVersion ?? '', event: type, seenAt: Date.now() },
              });
            }
          },
          { log: opts.log },
        ),
    );
  }

  /** True once every reflector has listed once. */
  get synced(): boolean {
    return this.#reflectors.every((r) => r.synced);
  }

  start(): void {
    for (const r of this.#reflectors) r.start();
    this.#loops = Array.from({ length: this.#opts.workers ?? 10 }, () => this.#worker());
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all(this.#reflectors.map((r) => r.stop()));
    await Promise.all(this.#loops);
  }

  async #worker(): Promise<void> {
    for (;;) {
      const got = await this.queue.get();
      if (!got) return;
      const { key, item, addedAt } = got;
      const rk = { message: item, receipt: '', attempt: this.queue.retries(key) + 1, enqueuedAt: Date.now() - (performance.now() - addedAt), coalesced: 1 };
      try {
        const outcome = await this.#handle(rk);
        this.queue.forget(key);
        if (outcome.kind === 'requeue') this.queue.addAfter(key, item, outcome.afterSeconds * 1000);
        this.metrics.inc('reconcile_total', 'Reconciles by result', { controller: 'vmi', result: outcome.kind === 'requeue' ? 'requeued' : 'done' });
      } catch (err) {
        if (isPermanent(err)) this.queue.forget(key);
        else this.queue.addRateLimited(key, item);
        this.metrics.inc('reconcile_total', 'Reconciles by result', { controller: 'vmi', result: 'retrying' });
      } finally {
        this.queue.done(key);
      }
    }
  }
}
