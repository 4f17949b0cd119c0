/**
 * The controller registry: every controller virt-reconciler runs, as data. The queue names
 * (`Controller`), message validation, the CDK stack (a queue, DLQ, timer queue, Lambda, alarms
 * and dashboard row per entry), the Lambda bundles, the local runtime's worker pools, the CLI's
 * `--controller` and both dashboards all read this list; none of them names a controller.
 *
 * Adding a controller (docs/controllers.md): its folder `functions/<name>/` (reconcile.ts,
 * deps.ts, controller.ts, handler.ts, …), one entry here, and its wiring in
 * functions/registry.ts — the compiler asks for that one because it is keyed by {@link Controller}.
 *
 * Nothing here imports a controller: this module is bundled into every Lambda function.
 */
import { KUBEVIRTS, NODES, type Resource } from './api/resources.ts';

/**
 * A controller's periodic **sweep** (docs/controllers.md "Sweeps"): a durable schedule (an
 * EventBridge Scheduler schedule on AWS, the local runtime's timer) puts the controller's sweep
 * key on its queue every `periodSeconds`; the controller lists `lists` once and sends one key per
 * object it found (shared/reconcile/sweep.ts). A schedule cannot name the objects, so it names
 * the sweep, and the controller expands it.
 */
export interface SweepInfo {
  /** How often, on the controller's clock. Whole minutes: EventBridge Scheduler's rate unit. */
  readonly periodSeconds: number;
  /** What one sweep lists (one LIST call, all namespaces). */
  readonly lists: Resource<unknown>;
  /**
   * `each`: every listed object's key. `only`: the key only when exactly one object is listed
   * (the workload updater's one KubeVirt CR: with none or several, KubeVirt queues nothing).
   */
  readonly keys: 'each' | 'only';
}

/** What the runtime and the infrastructure need to know about one controller. */
export interface ControllerInfo {
  /** Queue and key owner name: lower case, `[a-z][a-z0-9-]*`. The folder is `functions/<name>/`. */
  readonly name: string;
  /** Human name for dashboards and docs. */
  readonly title: string;
  /** Workers in the local runtime (KubeVirt's threadiness for this controller). */
  readonly workers: number;
  /** Share of the apiserver's in-flight budget on AWS (infra/aws/settings.ts planConcurrency). */
  readonly weight: number;
  /** `namespaced` keys are `namespace/name`; `cluster` keys are a bare `name` (a node, a policy). */
  readonly keyScope: 'namespaced' | 'cluster';
  /** Its periodic sweep, when it has periodic work no event may trigger. */
  readonly sweep?: SweepInfo;
  /**
   * Seconds a key waits on its queue after the event that sent it, as KubeVirt's `AddAfter` on
   * every wake: later events of the key coalesce into the waiting one without moving it. Whole
   * seconds: an SQS queue's `DelaySeconds` (a FIFO queue has no per-message delay). Default 0.
   */
  readonly wakeDelaySeconds?: number;
}

/**
 * Every controller, in the order dashboards and tables list them. `as const` so that
 * {@link Controller} is the union of the names.
 */
export const CONTROLLER_REGISTRY = [
  { name: 'vmi', title: 'VirtualMachineInstance', workers: 10, weight: 3, keyScope: 'namespaced' },
  { name: 'vm', title: 'VirtualMachine', workers: 3, weight: 2, keyScope: 'namespaced' },
  { name: 'migration', title: 'VirtualMachineInstanceMigration', workers: 3, weight: 2, keyScope: 'namespaced' },
  // KubeVirt's pool enqueues every wake 1 s late (`defaultAddDelay`: "prevents pool from being reconciled too often").
  { name: 'pool', title: 'VirtualMachinePool', workers: 3, weight: 1, keyScope: 'namespaced', wakeDelaySeconds: 1 },
  { name: 'replicaset', title: 'VirtualMachineInstanceReplicaSet', workers: 3, weight: 1, keyScope: 'namespaced' },
  // KubeVirt's once-a-minute re-check of every node: a node whose virt-handler died sends no event.
  { name: 'node', title: 'Node', workers: 3, weight: 1, keyScope: 'cluster', sweep: { periodSeconds: 60, lists: NODES, keys: 'each' } },
  { name: 'evacuation', title: 'Evacuation (node drain)', workers: 3, weight: 1, keyScope: 'cluster' },
  { name: 'disruption-budget', title: 'Disruption budget (legacy PDB cleanup)', workers: 3, weight: 1, keyScope: 'namespaced' },
  // One worker, as KubeVirt hard-codes: there is one key (the KubeVirt CR).
  // Swept at batchEvictionInterval's default (60 s), the pace of its eviction batches.
  { name: 'workload-updater', title: 'Workload updater (launcher upgrades)', workers: 1, weight: 1, keyScope: 'namespaced', sweep: { periodSeconds: 60, lists: KUBEVIRTS, keys: 'only' } },
  { name: 'export', title: 'VirtualMachineExport', workers: 3, weight: 1, keyScope: 'namespaced' },
  // KubeVirt's --snapshot-controller-threads default; one key names a snapshot and the VM of that name.
  { name: 'snapshot', title: 'VirtualMachineSnapshot (and contents, VM snapshot statuses)', workers: 6, weight: 1, keyScope: 'namespaced' },
  { name: 'restore', title: 'VirtualMachineRestore', workers: 3, weight: 1, keyScope: 'namespaced' },
  // KubeVirt runs 6 workers on each of its two queues (backups, trackers); here one queue serves both.
  { name: 'backup', title: 'VirtualMachineBackup (and tracker)', workers: 6, weight: 1, keyScope: 'namespaced' },
  // KubeVirt's --clone-controller-threads default.
  { name: 'clone', title: 'VirtualMachineClone', workers: 3, weight: 1, keyScope: 'namespaced' },
] as const satisfies readonly ControllerInfo[];

/** A controller's name: one queue (and one DLQ and timer queue) each. */
export type Controller = (typeof CONTROLLER_REGISTRY)[number]['name'];

/** The controller names, in registry order. */
export const CONTROLLERS: readonly Controller[] = CONTROLLER_REGISTRY.map((c) => c.name);

/** The registry entry of `name`. */
export function controllerInfo(name: Controller): ControllerInfo {
  return CONTROLLER_REGISTRY.find((c) => c.name === name)!;
}

/** How long (ms) a key sent to `name`'s queue waits before it may be received (the registry's `wakeDelaySeconds`). */
export function wakeDelayMs(name: Controller): number {
  return ((controllerInfo(name) as ControllerInfo).wakeDelaySeconds ?? 0) * 1000;
}

/** The controllers that have a sweep, with it, in registry order. */
export function sweeps(): readonly { readonly controller: Controller; readonly sweep: SweepInfo }[] {
  return CONTROLLER_REGISTRY.flatMap((c: ControllerInfo) => (c.sweep ? [{ controller: c.name as Controller, sweep: c.sweep }] : []));
}

/** True when `value` names a registered controller. */
export function isController(value: unknown): value is Controller {
  return typeof value === 'string' && (CONTROLLERS as readonly string[]).includes(value);
}

/** A value of `f(controller)` for every controller. */
export function perController<T>(f: (c: Controller) => T): Record<Controller, T> {
  return Object.fromEntries(CONTROLLERS.map((c) => [c, f(c)])) as Record<Controller, T>;
}
