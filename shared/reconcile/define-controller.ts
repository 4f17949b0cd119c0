/**
 * The one place a controller is declared (docs/architecture.md "Adding a controller"):
 * `functions/<name>/controller.ts` calls {@link defineController} with
 *
 * - `name` — its entry in the registry's queue facts (shared/controllers.ts: key scope, workers,
 *   weight, sweep), which every Lambda bundle and the infrastructure read without any controller code;
 * - `wakes` — which watched events wake which of its keys (`functions/<name>/wakes.ts`, pure; the
 *   relay imports only these, never a reconciler);
 * - `rbac` — what its reconcile may do in the cluster: the ClusterRole the chart, the raw
 *   manifests and the real lane's identities are made from;
 * - `reconcile` and `deps` — the steps, and how its narrow deps are built from the one
 *   {@link ControllerContext} every runtime (a Lambda container, the local runtime) provides.
 *
 * `functions/registry.ts` lists the definitions; `functions/<name>/handler.ts` is one line.
 */
import type { Controller } from '../controllers.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import type { ClusterConfigRead } from '../config/cluster-config-cache.ts';
import type { KubeClient } from '../kube/client.ts';
import type { VirtApiClient } from '../kube/virt-api.ts';
import type { Logger } from '../metrics/log.ts';
import type { MetricsRegistry } from '../metrics/registry.ts';
import type { Resource } from '../api/resources.ts';
import type { RelayRoute, WatchedObject } from '../relay/route.ts';
import type { ViewRead, ViewSource } from '../relay/view.ts';
import type { Expectations, Leases } from '../state/port.ts';
import type { ControllerSpec } from './instrument.ts';
import type { Outcome, ReconcileContext } from './outcome.ts';

/**
 * What every controller may draw on, the same in a Lambda container and in the local runtime.
 * Built once per runtime (per cold start on Lambda); a definition's `deps` picks what it needs.
 */
export interface ControllerContext {
  /** The runtime's client; each reconcile gets a counting wrapper of it as `deps.kube`. */
  readonly kube: KubeClient;
  readonly expectations: Expectations;
  /** Cross-key budgets (migration limits, periodic timers) shared by every worker. */
  readonly leases: Leases;
  /** The KubeVirt CR's configuration, cached a few seconds; `{ fresh: true }` reads it anew. */
  readonly clusterConfig: (read?: ClusterConfigRead) => Promise<ClusterConfig>;
  readonly log: Logger;
  /** Epoch ms on the controller's clock. */
  readonly now: () => number;
  /**
   * Simulated ms per wall-clock ms of `now` (a sped-up sandbox clock; absent in production). The
   * queue's requeue-after timers run on the wall clock, so waits measured on `now` are divided by it.
   */
  readonly clockSpeed?: number | undefined;
  /**
   * After how long (ms of `now`) an unsatisfied expectation may be taken over: per-key
   * serialization means the pass that recorded it is gone by then. Default: the 5-minute expiry.
   */
  readonly takeoverMs?: number | undefined;
  /** virt-api's subresources (freeze, unfreeze, stop, backup commands). */
  readonly virtApi: VirtApiClient;
  /** The runtime's registry, for gauges a controller sets itself. */
  readonly metrics: MetricsRegistry;
}

/** A controller's part of the relay: what it watches and how an event maps to its keys. */
export interface ControllerWakes extends RelayRoute {
  /** Whose keys the mapper answers (every target it returns names this controller). */
  readonly controller: Controller;
  /**
   * The first reads of its reconcile, answered by the relay in the key's message from what it
   * watches (shared/relay/view.ts): `resources` are kept whole by the relay, `reads` names the
   * reads for one key. Without it the reconcile reads everything from the API server.
   */
  readonly view?: ControllerView;
}

/** What a controller's messages carry (shared/relay/view.ts). */
export interface ControllerView {
  readonly resources: readonly Resource<unknown>[];
  readonly reads: (key: string, source: ViewSource) => readonly ViewRead[];
  /**
   * How long (ms) the relay may hold the key's message after this event, waiting for a write that
   * is known to follow (the VMI status a pass writes right after it creates the pod): a newer
   * event of the key sends it at once, with the newer view. Default 0.
   */
  readonly holdMs?: (key: string, event: ViewCause, source: ViewSource) => number;
}

/** The event a key's message is for, as a view's hold rule sees it. */
export interface ViewCause {
  readonly kind: string;
  readonly type: string;
  readonly object: WatchedObject;
}

/** One RBAC policy rule (rbac.authorization.k8s.io/v1 PolicyRule, resource rules only). */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Why the reconcile needs it, when that is not obvious (rendered as a comment in the manifests). */
  readonly why?: string;
}

/** A controller, declared once. `D` is its reconcile's own narrow deps object. */
export interface ControllerDefinition<D = unknown> {
  readonly name: Controller;
  readonly wakes: ControllerWakes;
  readonly rbac: readonly PolicyRule[];
  /**
   * The steps (the reconcile contract, outcome.ts). A method, so that a definition of any deps
   * type is a `ControllerDefinition<unknown>` in the registry's lists: each definition's deps only
   * ever reach its own reconcile (bindController).
   */
  reconcile(key: string, deps: D, ctx?: ReconcileContext): Promise<Outcome>;
  /**
   * Its deps from the context: called once per runtime (what it builds here — a cache, a client —
   * lives as long as the runtime), then the returned function once per reconcile, around that
   * reconcile's counting client.
   */
  readonly deps: (ctx: ControllerContext) => (kube: KubeClient) => D;
}

/**
 * The rule every controller has besides its own: the cutover's fence reads virt-controller's Lease
 * before a reconcile writes (docs/cutover.md).
 */
export const LEASE_FENCE_RULE: PolicyRule = Object.freeze({
  apiGroups: ['coordination.k8s.io'],
  resources: ['leases'],
  verbs: ['get'],
  why: "The cutover's fence: virt-controller's Lease is read (once a second per process) to know whether this function may write (docs/cutover.md).",
});

/** Declares a controller; refuses wakes that answer for another controller. Its rules get {@link LEASE_FENCE_RULE}. */
export function defineController<D>(def: ControllerDefinition<D>): ControllerDefinition<D> {
  if (def.wakes.controller !== def.name) {
    throw new Error(`controller ${def.name}: its wakes answer for ${def.wakes.controller}`);
  }
  return Object.freeze({ ...def, rbac: [...def.rbac, LEASE_FENCE_RULE] });
}

/** Declares a controller's wakes (functions/<name>/wakes.ts). */
export function defineWakes(wakes: ControllerWakes): ControllerWakes {
  return Object.freeze(wakes);
}

/** The runtime form of a definition in one context: what the workers and the Lambda batch run. */
export function bindController<D>(def: ControllerDefinition<D>, ctx: ControllerContext): ControllerSpec<D> {
  return { controller: def.name, reconcile: (key, deps, rctx) => def.reconcile(key, deps, rctx), deps: def.deps(ctx), viewed: def.wakes.view !== undefined };
}

/**
 * The deps most controllers need: the context as it is, with the reconcile's counting client.
 * Their deps interfaces name the fields they read; the rest of the context is simply not read.
 */
export function contextDeps(ctx: ControllerContext): (kube: KubeClient) => ControllerContext {
  return (kube) => ({ ...ctx, kube });
}
