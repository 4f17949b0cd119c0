/**
 * The generic Kubernetes client every controller and the relay use (docs/architecture.md §6.5). A controller
 * names resources — descriptors in shared/api/resources.ts such as `VMIS`, `PODS`, `NODES` — and
 * calls the same verbs on all of them; adding a resource never adds a method here or in a
 * transport. {@link createKubeClient} (client-node.ts) implements it over
 * `@kubernetes/client-node`, {@link createHttpKubeClient} (http-client.ts) over `node:http`, and
 * {@link countingKubeClient} (call-counter.ts) wraps either to count calls per reconcile.
 *
 * ```ts
 * const vmi = await kube.get(VMIS, 'default', 'testvmi', { resourceVersion });
 * const pods = await kube.list(PODS, 'default', { labelSelector: 'kubevirt.io=virt-launcher' });
 * const node = await kube.get(NODES, undefined, 'node01');            // cluster-scoped: no namespace
 * await kube.patch(VMIS, 'default', 'testvmi', { type: 'merge', body: { status: { phase } } }, { subresource: 'status' });
 * await kube.updateScale(VMI_REPLICA_SETS, 'default', 'rs', 3);
 * ```
 *
 * Every call is exactly one HTTP request. `namespace` is required for namespaced resources and
 * must be `undefined` for cluster-scoped ones (an {@link InvalidInputError} before any request
 * otherwise); `list` with `namespace` undefined lists across all namespaces. Failures arrive as
 * the classes in errors.ts: gets answer `undefined` for a missing object, deletes answer `false`;
 * writes throw `NotFoundError`, `AlreadyExistsError`, `KubeTransientError` (Conflict /
 * TooManyRequests / ServerError), `KubeInvalidError` or `KubeRequestError`.
 *
 * Objects are raw JSON (unknown fields kept), the same from both transports. Core objects whose
 * client-node models type timestamps as `Date` (pods, PVCs, namespaces, nodes) arrive with `Date`s
 * there (core-dates.ts), as code written against client-node's models expects.
 */
import type { Resource, Subresource } from '../api/resources.ts';

/**
 * Read "not older than" a resourceVersion (docs/architecture.md §3): the apiserver may answer from its watch
 * cache but the answer includes every change up to that version. Unset = a quorum read.
 */
export interface ReadOptions {
  readonly resourceVersion?: string | undefined;
}

/**
 * A list by selectors; with `resourceVersion`, sent with `resourceVersionMatch=NotOlderThan`.
 * `limit` and `continue` page through a large collection (the relay's relists).
 */
export interface ListOptions extends ReadOptions {
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly limit?: number | undefined;
  readonly continue?: string | undefined;
}

/** A list's items, the collection's resourceVersion, and the token of the next page if any. */
export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string | undefined;
  readonly continueToken?: string | undefined;
}

/** One RFC 6902 operation. `test` ops make a patch conditional on what was read. */
export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'test' | 'move' | 'copy';
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
}

/** RFC 6901 escaping of one JSON-pointer segment (`kubevirt.io/x` → `kubevirt.io~1x`). */
export function escapeJsonPointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * A patch body and its type. `merge` = RFC 7386 JSON merge patch (`null` deletes, arrays replace);
 * `json` = RFC 6902. A failed `test` op is reported as `KubeTransientError` reason `Conflict`
 * (the object changed since it was read): re-read and try again.
 *
 * `strategic` = Kubernetes strategic merge patch (`application/strategic-merge-patch+json`): lists
 * with a patch merge key merge by it (e.g. `status.conditions` by `type`), so one condition can be
 * set without sending, or racing over, the others. **Core (compiled-in) types only** — pods here;
 * the apiserver refuses it on custom resources (VMIs, migrations…) with 415 Unsupported Media Type,
 * which arrives as a `KubeRequestError`.
 */
export type Patch =
  | { readonly type: 'merge'; readonly body: Readonly<Record<string, unknown>> }
  | { readonly type: 'strategic'; readonly body: Readonly<Record<string, unknown>> }
  | { readonly type: 'json'; readonly ops: readonly JsonPatchOperation[] };

/** Write to the object or to its `/status` subresource (spec and metadata ignored there). */
export interface WriteOptions {
  readonly subresource?: Extract<Subresource, 'status'> | undefined;
}

/** Delete options. Preconditions make the delete fail with a Conflict if the object changed. */
export interface DeleteOptions {
  readonly gracePeriodSeconds?: number | undefined;
  readonly preconditions?: { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined } | undefined;
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan' | undefined;
}

/** The object an Event is about. */
export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string | undefined;
  readonly name: string;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
}

/** A core v1 Event to record, as KubeVirt's recorder would (`Normal`/`Warning`, CamelCase reason). */
export interface EventInput {
  readonly involvedObject: InvolvedObject;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** The emitting controller's `source.component` (KubeVirt's name for it); default the client's. */
  readonly component?: string;
}

/** Any object the client writes: it is addressed by its metadata. */
export interface KubeObject {
  metadata?: { name?: string; namespace?: string; generateName?: string; resourceVersion?: string } | undefined;
}

/** An `autoscaling/v1` Scale, as a resource's `/scale` subresource serves it. */
export interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

/** The verbs, on any resource. */
export interface KubeClient {
  /** GET one object (or, with `subresource: 'status'`, its status view). */
  get<T>(res: Resource<T>, namespace: string | undefined, name: string, options?: ReadOptions): Promise<T | undefined>;
  /** LIST in one namespace, across all namespaces (`namespace` undefined), or of a cluster-scoped resource. */
  list<T>(res: Resource<T>, namespace: string | undefined, options?: ListOptions): Promise<ListResult<T>>;
  /** POST; the namespace is the object's own `metadata.namespace` (required for namespaced resources). */
  create<T extends KubeObject>(res: Resource<T>, obj: T): Promise<T>;
  /** PUT; `metadata.resourceVersion` must be set (optimistic concurrency → Conflict). */
  update<T extends KubeObject>(res: Resource<T>, obj: T, options?: WriteOptions): Promise<T>;
  /** PATCH the object or its `/status`. */
  patch<T>(res: Resource<T>, namespace: string | undefined, name: string, patch: Patch, options?: WriteOptions): Promise<T>;
  /** DELETE; `false` when the object was already gone (KubeVirt counts that as success). */
  delete<T>(res: Resource<T>, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<boolean>;
  /** GET `/scale` (resources whose descriptor lists `scale`). */
  getScale(res: Resource, namespace: string | undefined, name: string, options?: ReadOptions): Promise<Scale | undefined>;
  /** Sets `spec.replicas` through `/scale` (a merge patch, as `kubectl scale` does). */
  updateScale(res: Resource, namespace: string | undefined, name: string, replicas: number): Promise<Scale>;
  /** Records a core v1 Event in the involved object's namespace. */
  createEvent(event: EventInput): Promise<void>;
  /**
   * POST `pods/<name>/eviction` (a policy/v1 Eviction, empty deleteOptions), as `kubectl drain`
   * and KubeVirt's workload updater do: the pod is deleted unless a PodDisruptionBudget or an
   * admission webhook refuses (429 TooManyRequests, thrown like any other API error).
   */
  evict(namespace: string, podName: string): Promise<void>;
}

/** The verbs of {@link KubeClient}, for wrappers that decorate every call (counters, timers, chaos). */
export const KUBE_VERBS = ['get', 'list', 'create', 'update', 'patch', 'delete', 'getScale', 'updateScale', 'createEvent', 'evict'] as const satisfies readonly (keyof KubeClient)[];

export type { Resource, Subresource };
