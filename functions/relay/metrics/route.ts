/**
 * How the relay carries KubeVirt's virt-controller metrics (docs/operations.md): one extra route
 * beside the controllers' wakes, whose watches add only what the collectors need and nothing
 * watches yet (instance types and preferences, for the `instance_type` and `preference` labels),
 * whose "mapper" records each event and never answers a key; and two collectors on the relay's
 * registry, the VMI/VM/migration families and the component's ready/leading gauges.
 */
import {
  CLUSTER_INSTANCETYPES,
  CLUSTER_PREFERENCES,
  INSTANCETYPES,
  KUBEVIRTS,
  MIGRATIONS,
  PREFERENCES,
  PVCS,
  VMIS,
  VMS,
} from '../../../shared/api/resources.ts';
import { componentCollector } from '../../../shared/metrics/kubevirt/component.ts';
import type { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import { LAUNCHER_PODS, type RelayRoute, type WatchSpec } from '../../../shared/relay/route.ts';
import { KubevirtCollector } from './collector.ts';

/** What the collectors read: KubeVirt's informers of the same objects. */
export const METRICS_WATCHES: readonly WatchSpec[] = [
  { res: VMIS },
  { res: VMS },
  { res: MIGRATIONS },
  LAUNCHER_PODS,
  { res: PVCS },
  { res: KUBEVIRTS },
  { res: INSTANCETYPES },
  { res: CLUSTER_INSTANCETYPES },
  { res: PREFERENCES },
  { res: CLUSTER_PREFERENCES },
];

export class KubevirtMetrics {
  readonly collector: KubevirtCollector;
  readonly route: RelayRoute;
  #running = false;
  #removers: (() => void)[];

  /** `synced`: whether the relay's watches have all listed once; `holdsLease`: whether we hold virt-controller's Lease (undefined: no cutover runs). */
  constructor(registry: MetricsRegistry, synced: () => boolean, holdsLease: () => boolean | undefined = () => undefined) {
    this.collector = new KubevirtCollector(registry);
    this.route = {
      watches: METRICS_WATCHES,
      mapper: () => (kind, type, obj) => {
        this.collector.observe(kind, type, obj);
        return [];
      },
    };
    this.#removers = [registry.addCollector(componentCollector(() => ({ running: this.#running, synced: synced(), holdsLease: holdsLease() }))), registry.addCollector(this.collector)];
  }

  /**
   * Takes this relay's collectors out of the registry: for a relay replaced by another in the same
   * process and registry (the chaos harness's kill), whose families would otherwise be written
   * twice on every scrape and whose whole relay the registry would keep alive.
   */
  detach(): void {
    for (const remove of this.#removers) remove();
    this.#removers = [];
  }

  start(): void {
    this.#running = true;
  }

  /** Leading and ready drop to 0 at once: the last scrape before the process ends says so. */
  stop(): void {
    this.#running = false;
  }
}
