/**
 * The Kubernetes operations a reconcile may perform, declared narrowly (STYLE.md §5). Controllers
 * depend on {@link KubeClient}; {@link createKubeClient} (client-node.ts) implements it over
 * `@kubernetes/client-node`, and {@link countingKubeClient} (call-counter.ts) wraps any
 * implementation to count calls per reconcile.
 *
 * Every method is exactly one HTTP request. Failures arrive as the classes in errors.ts:
 * gets answer `undefined` for a missing object, deletes answer `false`; writes throw
 * `NotFoundError`, `AlreadyExistsError`, `KubeTransientError` (Conflict / TooManyRequests /
 * ServerError), `KubeInvalidError` or `KubeRequestError`.
 *
 * KubeVirt objects are raw JSON (string timestamps, unknown fields kept). Pods, PVCs, namespaces
 * and nodes are client-node models (`V1Pod`): timestamps are `Date`s and fields the model does not know are
 * dropped (kube-api.md §1.5) — never read-modify-write a pod through them.
 */
import type { V1Namespace, V1Node, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type {
  DataVolume,
  KubeVirt,
  MigrationPolicy,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
} from '../api/index.ts';

/**
 * Read "not older than" a resourceVersion (DESIGN.md §3): the apiserver may answer from its watch
 * cache but the answer includes every change up to that version. Unset = a quorum read.
 */
export interface ReadOptions {
  readonly resourceVersion?: string | undefined;
}

/** A list by selectors; with `resourceVersion`, sent with `resourceVersionMatch=NotOlderThan`. */
export interface ListOptions extends ReadOptions {
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

/** A list's items and the collection's resourceVersion. */
export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string | undefined;
}

/** One RFC 6902 operation. `test` ops make a patch conditional on what was read. */
export interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'test' | 'move' | 'copy';
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
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
  readonly subresource?: 'status' | undefined;
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
}

/** The Kubernetes operations the controllers need. */
export interface KubeClient {
  getVMI(namespace: string, name: string, options?: ReadOptions): Promise<VirtualMachineInstance | undefined>;
  getVM(namespace: string, name: string, options?: ReadOptions): Promise<VirtualMachine | undefined>;
  getMigration(namespace: string, name: string, options?: ReadOptions): Promise<VirtualMachineInstanceMigration | undefined>;
  getKubeVirt(namespace: string, name: string, options?: ReadOptions): Promise<KubeVirt | undefined>;
  getDataVolume(namespace: string, name: string, options?: ReadOptions): Promise<DataVolume | undefined>;
  getPod(namespace: string, name: string, options?: ReadOptions): Promise<V1Pod | undefined>;
  getPVC(namespace: string, name: string, options?: ReadOptions): Promise<V1PersistentVolumeClaim | undefined>;
  /** A namespace (cluster-scoped); migration policies match on its labels. */
  getNamespace(name: string, options?: ReadOptions): Promise<V1Namespace | undefined>;
  /** A node (cluster-scoped); a migration target's host-model CPU selectors come from the source node's labels. */
  getNode(name: string, options?: ReadOptions): Promise<V1Node | undefined>;

  /** Pods in one namespace, e.g. `kubevirt.io=virt-launcher,kubevirt.io/created-by=<vmi uid>`. */
  listPods(namespace: string, options?: ListOptions): Promise<ListResult<V1Pod>>;
  /** Migrations in one namespace, or in all namespaces when `namespace` is undefined. */
  listMigrations(namespace: string | undefined, options?: ListOptions): Promise<ListResult<VirtualMachineInstanceMigration>>;
  /** KubeVirt CRs (there is one per cluster, in KubeVirt's install namespace) in one or all namespaces. */
  listKubeVirts(namespace: string | undefined, options?: ListOptions): Promise<ListResult<KubeVirt>>;
  /** MigrationPolicies (`migrations.kubevirt.io/v1alpha1`, cluster-scoped). */
  listMigrationPolicies(options?: ListOptions): Promise<ListResult<MigrationPolicy>>;

  createPod(namespace: string, pod: V1Pod): Promise<V1Pod>;
  /** `false` when the pod was already gone (KubeVirt counts that as success). */
  deletePod(namespace: string, name: string, options?: DeleteOptions): Promise<boolean>;
  /**
   * Patches a pod or (`subresource: 'status'`) its status, e.g. a readiness-gate condition with a
   * `strategic` patch. The answer is a model like {@link getPod}'s.
   */
  patchPod(namespace: string, name: string, patch: Patch, options?: WriteOptions): Promise<V1Pod>;

  createVMI(vmi: VirtualMachineInstance): Promise<VirtualMachineInstance>;
  /** PUT; `metadata.resourceVersion` must be set (optimistic concurrency → Conflict). */
  updateVMI(vmi: VirtualMachineInstance, options?: WriteOptions): Promise<VirtualMachineInstance>;
  patchVMI(namespace: string, name: string, patch: Patch, options?: WriteOptions): Promise<VirtualMachineInstance>;
  /** `false` when the VMI was already gone. */
  deleteVMI(namespace: string, name: string, options?: DeleteOptions): Promise<boolean>;

  createVM(vm: VirtualMachine): Promise<VirtualMachine>;
  updateVM(vm: VirtualMachine, options?: WriteOptions): Promise<VirtualMachine>;
  patchVM(namespace: string, name: string, patch: Patch, options?: WriteOptions): Promise<VirtualMachine>;

  createMigration(migration: VirtualMachineInstanceMigration): Promise<VirtualMachineInstanceMigration>;
  updateMigration(migration: VirtualMachineInstanceMigration, options?: WriteOptions): Promise<VirtualMachineInstanceMigration>;
  patchMigration(namespace: string, name: string, patch: Patch, options?: WriteOptions): Promise<VirtualMachineInstanceMigration>;
  /** `false` when the migration was already gone. */
  deleteMigration(namespace: string, name: string, options?: DeleteOptions): Promise<boolean>;

  createDataVolume(dataVolume: DataVolume): Promise<DataVolume>;

  /** Records a core v1 Event in the involved object's namespace. */
  createEvent(event: EventInput): Promise<void>;
}
