/**
 * KubeVirt's workqueue metrics (`kubevirt_workqueue_*{name}`) for our queues: each controller's
 * queue carries the `name` of the KubeVirt workqueue it replaces (`virt-controller-vmi`, …), so
 * dashboards and queries written for virt-controller keep working. Waits and work durations are
 * observed per reconcile; the in-flight gauges (longest running processor, unfinished work) are
 * computed at scrape time from the reconciles running in this process.
 */
import type { Controller } from '../../controllers.ts';
import type { ExpositionWriter, MetricsCollector } from '../exposition.ts';
import type { MetricsRegistry } from '../registry.ts';
import { WORKQUEUE } from './catalog.ts';
import { addMetric, observeMetric, setMetric } from './record.ts';

/** The KubeVirt workqueue each controller's queue stands for. */
export const KUBEVIRT_QUEUE_NAMES: Readonly<Record<Controller, string>> = {
  vmi: 'virt-controller-vmi',
  vm: 'virt-controller-vm',
  migration: 'virt-controller-migration',
  pool: 'virt-controller-pool',
  replicaset: 'virt-controller-replicaset',
  node: 'virt-controller-node',
  evacuation: 'virt-controller-evacuation',
  'disruption-budget': 'virt-controller-disruption-budget',
  'workload-updater': 'virt-controller-workload-update',
  export: 'virt-controller-export-vmexport',
  // Ours reconciles snapshots, their contents and VM snapshot statuses from one queue.
  snapshot: 'virt-controller-snapshot-vmsnapshot',
  restore: 'virt-controller-restore-vmrestore',
  backup: 'virt-controller-vmbackup',
  clone: 'virt-controller-vmclone',
};

/** The `name` label of a controller's queue. */
export function queueNameOf(controller: Controller): string {
  return KUBEVIRT_QUEUE_NAMES[controller];
}

/** Reconciles running now, per controller, and the gauges client-go derives from them. */
class InFlight implements MetricsCollector {
  readonly #running = new Map<Controller, Map<number, number>>();
  readonly #now: () => number;
  #next = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  begin(controller: Controller): number {
    const id = this.#next++;
    let m = this.#running.get(controller);
    if (!m) this.#running.set(controller, (m = new Map()));
    m.set(id, this.#now());
    return id;
  }

  end(controller: Controller, id: number): void {
    this.#running.get(controller)?.delete(id);
  }

  collect(out: ExpositionWriter): void {
    const now = this.#now();
    const rows = [...this.#running].map(([c, m]) => {
      let longest = 0;
      let total = 0;
      for (const started of m.values()) {
        const s = Math.max(0, (now - started) / 1000);
        total += s;
        if (s > longest) longest = s;
      }
      return { name: queueNameOf(c), longest, total };
    });
    out.family(WORKQUEUE.longestRunning);
    for (const r of rows) out.sample(WORKQUEUE.longestRunning.name, WORKQUEUE.longestRunning.labels, [r.name], r.longest);
    out.family(WORKQUEUE.unfinishedWork);
    for (const r of rows) out.sample(WORKQUEUE.unfinishedWork.name, WORKQUEUE.unfinishedWork.labels, [r.name], r.total);
  }
}

const inFlightOf = new WeakMap<MetricsRegistry, InFlight>();

/** The registry's in-flight tracker, registered as its collector on first use. */
function inFlight(registry: MetricsRegistry, now: () => number): InFlight {
  let t = inFlightOf.get(registry);
  if (!t) {
    t = new InFlight(now);
    inFlightOf.set(registry, t);
    registry.addCollector(t);
  }
  return t;
}

/**
 * One reconcile's workqueue metrics: its wait in the queue now, its work duration and the
 * in-flight gauges until `done()` is called. Times are epoch ms from `now`.
 */
export function workqueueReconcile(registry: MetricsRegistry, controller: Controller, waitedMs: number, now: () => number = Date.now): { done(): void } {
  const name = queueNameOf(controller);
  observeMetric(registry, WORKQUEUE.queueDuration, { name }, Math.max(0, waitedMs) / 1000);
  const tracker = inFlight(registry, now);
  const id = tracker.begin(controller);
  const started = now();
  return {
    done() {
      tracker.end(controller, id);
      observeMetric(registry, WORKQUEUE.workDuration, { name }, Math.max(0, now() - started) / 1000);
    },
  };
}

/** Keys the relay sent to a controller's queue. */
export function workqueueAdds(registry: MetricsRegistry, controller: Controller, n = 1): void {
  addMetric(registry, WORKQUEUE.adds, { name: queueNameOf(controller) }, n);
}

/** A key put back with backoff (a failed reconcile to be retried). */
export function workqueueRetry(registry: MetricsRegistry, controller: Controller): void {
  addMetric(registry, WORKQUEUE.retries, { name: queueNameOf(controller) });
}

/** The keys waiting or in flight in a controller's queue, as last read. */
export function workqueueDepth(registry: MetricsRegistry, controller: Controller, depth: number): void {
  setMetric(registry, WORKQUEUE.depth, { name: queueNameOf(controller) }, depth);
}
