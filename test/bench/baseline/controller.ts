/**
 * The yardstick: an in-process, client-go-style virt-controller — list+watch reflectors feed one
 * in-memory rate-limited workqueue per controller (coalescing, per-key serialization), N workers
 * each call the SAME instrumented reconcile the serverless path runs (the VMI controller by
 * default; the replica set bench adds the replica set controller), with expectations held in
 * memory as KubeVirt does. What it does not have is exactly what the serverless path adds: the relay's
 * outbox, the durable queue, the table.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { isPermanent } from '../../../shared/errors.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { Logger } from '../../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { KeyMessage } from '../../../shared/queue/message.ts';
import { cachedClusterConfig } from '../../../shared/config/cluster-config-cache.ts';
import { instrumented } from '../../../shared/reconcile/instrument.ts';
import { Reflector } from '../../../functions/relay/reflector.ts';
import { WAKES } from '../../../functions/wakes.ts';
import { watchedResources } from '../../../functions/relay/resources.ts';
import { vmiController } from '../../../functions/vmi/controller.ts';
import type { Controller } from '../../../shared/controllers.ts';
import type { ControllerSpec } from '../../../shared/reconcile/instrument.ts';
import type { Expectations } from '../../../shared/state/port.ts';
import type { EventMapper } from '../../../shared/relay/route.ts';
import { MemoryExpectations } from './memory-expectations.ts';
import { RateLimitedWorkqueue } from './workqueue.ts';
import { testSpec } from '../../support/controller-context.ts';

export interface BaselineOptions {
  readonly kubeConfig: KubeConfig;
  /** The client the reconciles use (the caller may wrap it, e.g. to time calls). */
  readonly kube: KubeClient;
  readonly log: Logger;
  /** KubeVirt's VMI controller runs 10 workers. */
  readonly workers?: number;
  /**
   * More controllers beside the VMI one, each with its worker count (KubeVirt's threadiness),
   * built on the baseline's in-memory expectations.
   */
  readonly extra?: readonly { readonly make: (expectations: Expectations) => ControllerSpec<unknown>; readonly workers: number }[];
}

interface Running {
  readonly controller: Controller;
  readonly queue: RateLimitedWorkqueue<KeyMessage>;
  readonly handle: ReturnType<typeof instrumented>;
  readonly workers: number;
}

export class BaselineController {
  readonly metrics = new MetricsRegistry();
  readonly #running: Running[];
  readonly #reflectors: Reflector[];
  readonly #opts: BaselineOptions;
  #loops: Promise<void>[] = [];

  constructor(opts: BaselineOptions) {
    this.#opts = opts;
    const expectations = new MemoryExpectations();
    const specs = [
      { spec: testSpec(vmiController, { kube: opts.kube, expectations, clusterConfig: cachedClusterConfig(opts.kube), log: opts.log }) as ControllerSpec<unknown>, workers: opts.workers ?? 10 },
      ...(opts.extra ?? []).map((e) => ({ spec: e.make(expectations), workers: e.workers })),
    ];
    this.#running = specs.map(({ spec, workers }) => ({
      controller: spec.controller,
      queue: new RateLimitedWorkqueue<KeyMessage>(),
      handle: instrumented(spec, { kube: opts.kube, metrics: this.metrics, log: opts.log }),
      workers,
    }));
    const byController = new Map(this.#running.map((r) => [r.controller, r]));
    // The relay's own mappers (one per controller, as the relay makes them), no outbox.
    const mappers = new Map<string, EventMapper>();
    for (const w of WAKES) if (byController.has(w.controller)) mappers.set(w.controller, w.mapper({ now: Date.now }));
    this.#reflectors = watchedResources(opts.kubeConfig, WAKES).map(
      (res) =>
        new Reflector(
          opts.kubeConfig,
          res,
          (type, obj, old) => {
            // Event handlers only map events to keys (the relay's own mapping, no outbox).
            for (const t of [...mappers.values()].flatMap((m) => m(res.kind, type, obj, old))) {
              const target = byController.get(t.controller);
              if (!target) continue;
              const md = obj.metadata ?? {};
              target.queue.add(t.key, {
                v: 1,
                controller: t.controller,
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
    this.#loops = this.#running.flatMap((r) => Array.from({ length: r.workers }, () => this.#worker(r)));
  }

  /** The VMI controller's workqueue. */
  get queue(): RateLimitedWorkqueue<KeyMessage> {
    return this.#running[0]!.queue;
  }

  async stop(): Promise<void> {
    for (const r of this.#running) r.queue.shutDown();
    await Promise.all(this.#reflectors.map((r) => r.stop()));
    await Promise.all(this.#loops);
  }

  async #worker(r: Running): Promise<void> {
    const { queue } = r;
    for (;;) {
      const got = await queue.get();
      if (!got) return;
      const { key, item, addedAt } = got;
      const rk = { message: item, receipt: '', attempt: queue.retries(key) + 1, enqueuedAt: Date.now() - (performance.now() - addedAt), coalesced: 1 };
      try {
        const outcome = await r.handle(rk);
        queue.forget(key);
        if (outcome.kind === 'requeue') queue.addAfter(key, item, outcome.afterSeconds * 1000);
        this.metrics.inc('reconcile_total', 'Reconciles by result', { controller: r.controller, result: outcome.kind === 'requeue' ? 'requeued' : 'done' });
      } catch (err) {
        if (isPermanent(err)) queue.forget(key);
        else queue.addRateLimited(key, item);
        this.metrics.inc('reconcile_total', 'Reconciles by result', { controller: r.controller, result: 'retrying' });
      } finally {
        queue.done(key);
      }
    }
  }
}
