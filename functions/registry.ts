/**
 * The controllers' wiring, one entry per controller of the registry (shared/controllers.ts):
 * how the local runtime builds its reconcile and deps, and what the relay watches and maps for
 * it. Keyed by {@link Controller}, so registering a controller without wiring it (or the
 * reverse) does not compile. The Lambda functions do not read this file: each
 * `functions/<name>/handler.ts` builds its own controller, and its bundle holds only that one.
 *
 * Nothing else in the project names a controller: queues, the CDK stack, bundles, `up`, the CLI
 * and the dashboards all iterate the registry.
 */
import {
  CONTROLLER_REVISIONS,
  DATA_VOLUMES,
  KUBEVIRTS,
  MIGRATIONS,
  NODES,
  PDBS,
  PODS,
  PVCS,
  SERVICES,
  VM_BACKUP_TRACKERS,
  VM_BACKUPS,
  VM_CLONES,
  VM_EXPORTS,
  VM_POOLS,
  VM_RESTORES,
  VM_SNAPSHOT_CONTENTS,
  VM_SNAPSHOTS,
  VMI_REPLICA_SETS,
  VMIS,
  VMS,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from '../shared/api/resources.ts';
import { APP_LABEL } from '../shared/api/well-known.ts';
import { CONTROLLERS, type Controller } from '../shared/controllers.ts';
import type { KubeClient } from '../shared/kube/client.ts';
import { NO_VIRT_API, type VirtApiClient } from '../shared/kube/virt-api.ts';
import type { Logger } from '../shared/metrics/log.ts';
import type { MetricsRegistry } from '../shared/metrics/registry.ts';
import type { ControllerSpec } from '../shared/reconcile/instrument.ts';
import type { Expectations, Leases } from '../shared/state/port.ts';
import type { ClusterConfig } from '../shared/config/cluster-config.ts';
import type { ClusterConfigRead } from '../shared/config/cluster-config-cache.ts';
import { backupController } from './backup/controller.ts';
import { backupMapper } from './backup/relay-map.ts';
import { cloneController } from './clone/controller.ts';
import { cloneMapper } from './clone/relay-map.ts';
import { disruptionBudgetController } from './disruption-budget/controller.ts';
import { disruptionBudgetMapper } from './disruption-budget/relay-map.ts';
import { evacuationController } from './evacuation/controller.ts';
import { evacuationMapper } from './evacuation/relay-map.ts';
import { exportController } from './export/controller.ts';
import { exportMapper } from './export/relay-map.ts';
import { EXPORT_SERVICE_LABEL, EXPORTER_LABEL_KEY, EXPORTER_LABEL_VALUE } from './export/names.ts';
import { migrationController } from './migration/controller.ts';
import { cachedPolicySource } from './migration/policy-source.ts';
import { nodeController } from './node/controller.ts';
import { nodeMapper } from './node/relay-map.ts';
import { poolController } from './pool/controller.ts';
import { poolMapper } from './pool/relay-map.ts';
import { coreMapper } from './relay/map-event.ts';
import { replicaSetController } from './replicaset/controller.ts';
import { replicaSetMapper } from './replicaset/relay-map.ts';
import { restoreController } from './restore/controller.ts';
import { restoreMapper } from './restore/relay-map.ts';
import { snapshotController } from './snapshot/controller.ts';
import { snapshotMapper } from './snapshot/relay-map.ts';
import type { RelayRoute } from '../shared/relay/route.ts';
import { vmController } from './vm/controller.ts';
import { workloadUpdaterController } from './workload-updater/controller.ts';
import { workloadUpdaterMapper } from './workload-updater/relay-map.ts';
import { vmiController } from './vmi/controller.ts';

/** What every controller may draw on in the local runtime. */
export interface ControllerContext {
  /** The shared client (caches such as the migration policy source read through it). */
  readonly kube: KubeClient;
  readonly expectations: Expectations;
  readonly leases: Leases;
  readonly clusterConfig: (read?: ClusterConfigRead) => Promise<ClusterConfig>;
  readonly log: Logger;
  readonly now: () => number;
  /** Simulated ms per wall-clock ms of `now` (a sped-up sandbox clock). */
  readonly clockSpeed?: number | undefined;
  /** After how long an unsatisfied expectation may be taken over (VmiDeps.createTakeoverMs and the like). */
  readonly takeoverMs?: number | undefined;
  /** virt-api's subresources (freeze, unfreeze, stop): the storage controllers call them. */
  readonly virtApi?: VirtApiClient | undefined;
  /** The runtime's metrics registry, for gauges a controller exports itself (kubevirt_vmi_number_of_outdated). */
  readonly metrics?: MetricsRegistry | undefined;
}

/** One controller's wiring. */
export interface ControllerWiring {
  readonly spec: (ctx: ControllerContext) => ControllerSpec<unknown>;
  readonly relay: RelayRoute;
}

const opt = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> => (value === undefined ? {} : ({ [key]: value } as Record<K, V>));

/** Launcher, target and attachment pods: anything with the `kubevirt.io` label key. */
const LAUNCHER_PODS = { res: PODS, labelSelector: APP_LABEL };

/** Every controller's wiring. */
export const WIRING: Readonly<Record<Controller, ControllerWiring>> = {
  vmi: {
    spec: (c) => vmiController({ expectations: c.expectations, clusterConfig: c.clusterConfig, log: c.log, now: c.now, ...opt('createTakeoverMs', c.takeoverMs) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VMIS }, LAUNCHER_PODS, { res: PVCS }, { res: DATA_VOLUMES }, { res: KUBEVIRTS }, { res: MIGRATIONS }], mapper: coreMapper },
  },
  vm: {
    spec: (c) => vmController({ expectations: c.expectations, clusterConfig: c.clusterConfig, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed), ...opt('takeoverMs', c.takeoverMs) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VMS }, { res: VMIS }, { res: PVCS }, { res: DATA_VOLUMES }], mapper: coreMapper },
  },
  migration: {
    spec: (c) =>
      migrationController({
        expectations: c.expectations,
        leases: c.leases,
        clusterConfig: c.clusterConfig,
        policySource: cachedPolicySource(c.kube),
        log: c.log,
        now: c.now,
        ...opt('clockSpeed', c.clockSpeed),
        ...opt('createTakeoverMs', c.takeoverMs),
      }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: MIGRATIONS }, { res: VMIS }, LAUNCHER_PODS, { res: KUBEVIRTS }], mapper: coreMapper },
  },
  pool: {
    spec: (c) => poolController({ expectations: c.expectations, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed), ...opt('takeoverMs', c.takeoverMs) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VM_POOLS }, { res: VMS }, { res: VMIS }, { res: CONTROLLER_REVISIONS }, { res: PVCS }, { res: DATA_VOLUMES }], mapper: poolMapper },
  },
  replicaset: {
    spec: (c) => replicaSetController({ expectations: c.expectations, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed), ...opt('takeoverMs', c.takeoverMs) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VMI_REPLICA_SETS }, { res: VMIS }], mapper: replicaSetMapper },
  },
  node: {
    spec: (c) => nodeController({ leases: c.leases, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: NODES }, { res: VMIS }], mapper: nodeMapper },
  },
  evacuation: {
    spec: (c) => evacuationController({ expectations: c.expectations, clusterConfig: c.clusterConfig, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed), ...opt('takeoverMs', c.takeoverMs) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: NODES }, { res: VMIS }, { res: MIGRATIONS }], mapper: evacuationMapper },
  },
  'disruption-budget': {
    spec: (c) => disruptionBudgetController({ expectations: c.expectations, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VMIS }, { res: PDBS }, LAUNCHER_PODS, { res: MIGRATIONS }], mapper: disruptionBudgetMapper },
  },
  'workload-updater': {
    spec: (c) =>
      workloadUpdaterController({ expectations: c.expectations, leases: c.leases, clusterConfig: c.clusterConfig, log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed), ...opt('takeoverMs', c.takeoverMs), ...opt('metrics', c.metrics) }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: KUBEVIRTS }, { res: MIGRATIONS }, { res: VMIS }], mapper: workloadUpdaterMapper },
  },
  export: {
    spec: (c) => exportController({ log: c.log, now: c.now, ...opt('clockSpeed', c.clockSpeed) }) as ControllerSpec<unknown>,
    relay: {
      watches: [
        { res: VM_EXPORTS },
        { res: PODS, labelSelector: EXPORT_SERVICE_LABEL },
        { res: SERVICES, labelSelector: `${EXPORTER_LABEL_KEY}=${EXPORTER_LABEL_VALUE}` },
        { res: PVCS },
        { res: VM_SNAPSHOTS },
        { res: VMS },
        { res: VMIS },
        { res: KUBEVIRTS },
      ],
      mapper: exportMapper,
    },
  },
  snapshot: {
    spec: (c) => snapshotController({ virtApi: c.virtApi ?? NO_VIRT_API, log: c.log, metrics: c.metrics, now: c.now, clockSpeed: c.clockSpeed }) as ControllerSpec<unknown>,
    relay: {
      watches: [{ res: VM_SNAPSHOTS }, { res: VM_SNAPSHOT_CONTENTS }, { res: VOLUME_SNAPSHOTS }, { res: VOLUME_SNAPSHOT_CLASSES }, { res: VMS }, { res: VMIS }, { res: PVCS }, { res: DATA_VOLUMES }],
      mapper: snapshotMapper,
    },
  },
  restore: {
    spec: (c) => restoreController({ virtApi: c.virtApi ?? NO_VIRT_API, log: c.log, now: c.now, clockSpeed: c.clockSpeed }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VM_RESTORES }, { res: PVCS }, { res: DATA_VOLUMES }, { res: VMS }, { res: VM_SNAPSHOTS }], mapper: restoreMapper },
  },
  backup: {
    spec: (c) => backupController({ virtApi: c.virtApi ?? NO_VIRT_API, log: c.log, now: c.now }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VM_BACKUPS }, { res: VM_BACKUP_TRACKERS }, { res: VMIS }, { res: VM_EXPORTS }], mapper: backupMapper },
  },
  clone: {
    spec: (c) => cloneController({ log: c.log, now: c.now }) as ControllerSpec<unknown>,
    relay: { watches: [{ res: VM_CLONES }, { res: VM_SNAPSHOTS }, { res: VM_RESTORES }, { res: PVCS }, { res: VMS }], mapper: cloneMapper },
  },
};

/**
 * Every controller's spec, in registry order. `ctx` is one context for all, or one per
 * controller (the real lane gives each controller its own identity, as each Lambda has its own role).
 */
export function controllerSpecs(ctx: ControllerContext | ((c: Controller) => ControllerContext)): ControllerSpec<unknown>[] {
  return CONTROLLERS.map((c) => WIRING[c].spec(typeof ctx === 'function' ? ctx(c) : ctx));
}

/** Every controller's relay route, in registry order. */
export function relayRoutes(): RelayRoute[] {
  return CONTROLLERS.map((c) => WIRING[c].relay);
}
