/**
 * The pure parts of a {@link KubeClient} call that do not depend on the transport, shared by both
 * implementations (client-node.ts over `@kubernetes/client-node`, http-client.ts over `node:http`)
 * so that they send the same requests and answer the same way: URL paths, query parameters,
 * delete and patch bodies, the Event body, and the "missing is an answer" wrappers.
 *
 * Nothing here imports `@kubernetes/client-node` at runtime (type imports only): this module is
 * bundled into every Lambda function.
 */
import type { CoreV1Event, V1DeleteOptions, V1Namespace, V1Node, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataVolume, KubeVirt, MigrationPolicy, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/index.ts';
import type { ResourceCoordinates } from '../api/resources.ts';
import { InvalidInputError } from '../errors.ts';
import type { DeleteOptions, EventInput, KubeClient, ListOptions, ListResult, Patch, ReadOptions, WriteOptions } from './client.ts';
import { NotFoundError, toKubeError, type ApiRequest } from './errors.ts';

/** Settings shared by both {@link KubeClient} factories. */
export interface KubeClientOptions {
  /** Event `source.component`; KubeVirt's controllers report as `virtualmachine-controller`. */
  readonly component?: string;
  /** Event `reportingInstance` (e.g. the Lambda function name or the host). */
  readonly reportingInstance?: string;
  /** Clock for event timestamps; the edge is the only place that reads the wall clock. */
  readonly now?: () => Date;
}

/** Default Event source component, as KubeVirt's virt-controller reports it. */
export const DEFAULT_EVENT_COMPONENT = 'virtualmachine-controller';

/** Patch Content-Types (kube-api.md §1.2: client-node defaults to json-patch whatever the body). */
export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
/** Core types only: custom resources answer 415. */
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** Namespaces (cluster-scoped, core). Not in shared/api/resources.ts: only the client reads them. */
export const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false } as const satisfies ResourceCoordinates;
/** Nodes (cluster-scoped, core). */
export const NODES = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false } as const satisfies ResourceCoordinates;

/**
 * `/api/v1/namespaces/<ns>/pods/<name>[/status]` or `/apis/<group>/<version>/…`; without a
 * namespace, the all-namespaces collection.
 */
export function resourcePath(res: ResourceCoordinates, namespace?: string, name?: string, subresource?: 'status'): string {
  const parts = [res.group === '' ? `/api/${res.version}` : `/apis/${res.group}/${res.version}`];
  if (namespace !== undefined) parts.push('namespaces', encodeURIComponent(namespace));
  parts.push(res.plural);
  if (name !== undefined) parts.push(encodeURIComponent(name));
  if (subresource !== undefined) parts.push(subresource);
  return parts.join('/');
}

/** The request description errors and the call counter use. */
export function apiRequest(res: ResourceCoordinates, verb: ApiRequest['verb'], namespace?: string, name?: string): ApiRequest {
  return { verb, resource: res.plural, namespace, name };
}

/** Query of a GET: `resourceVersion` for a "not older than" read (DESIGN.md §3). */
export function readParams(options: ReadOptions | undefined): { resourceVersion?: string } {
  return options?.resourceVersion ? { resourceVersion: options.resourceVersion } : {};
}

/** Query of a LIST: selectors, and NotOlderThan when a resourceVersion is given (DESIGN.md §3). */
export function listParams(options: ListOptions | undefined): {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
} {
  const p: { labelSelector?: string; fieldSelector?: string; resourceVersion?: string; resourceVersionMatch?: string } = {};
  if (options?.labelSelector) p.labelSelector = options.labelSelector;
  if (options?.fieldSelector) p.fieldSelector = options.fieldSelector;
  if (options?.resourceVersion) {
    p.resourceVersion = options.resourceVersion;
    p.resourceVersionMatch = 'NotOlderThan';
  }
  return p;
}

/** Query of a DELETE. */
export function deleteParams(options: DeleteOptions | undefined): { gracePeriodSeconds?: number } {
  return options?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {};
}

/** Body of a DELETE: only when there are preconditions or a propagation policy (else no body). */
export function deleteBody(options: DeleteOptions | undefined): V1DeleteOptions | undefined {
  if (!options?.preconditions && !options?.propagationPolicy) return undefined;
  const body: V1DeleteOptions = {};
  if (options.preconditions) body.preconditions = { ...options.preconditions };
  if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
  return body;
}

/** The Content-Type that matches the patch's shape. */
export function patchContentType(patch: Patch): typeof MERGE_PATCH | typeof JSON_PATCH | typeof STRATEGIC_MERGE_PATCH {
  switch (patch.type) {
    case 'merge':
      return MERGE_PATCH;
    case 'strategic':
      return STRATEGIC_MERGE_PATCH;
    case 'json':
      return JSON_PATCH;
  }
}

/** What goes on the wire: the object of a merge/strategic patch, the op list of a JSON patch. */
export function patchBody(patch: Patch): object {
  return patch.type === 'json' ? patch.ops : patch.body;
}

/** Namespace and name of an object about to be written; both must be set. */
export function identity(
  obj: { metadata?: { namespace?: string; name?: string; generateName?: string } },
  kind: string,
  needName: boolean,
): { namespace: string; name: string } {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  if (!namespace) throw new InvalidInputError(`${kind}.metadata.namespace`, 'must be set to write the object');
  if (needName && !name) throw new InvalidInputError(`${kind}.metadata.name`, 'must be set to update the object');
  return { namespace, name };
}

/** Runs one request; whatever it throws comes out as the errors.ts hierarchy. */
export async function call<T>(request: ApiRequest, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    throw toKubeError(err, request);
  }
}

/** `undefined` on NotFound: a missing object is an answer, not a failure. */
export async function getOrUndefined<T>(request: ApiRequest, send: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call(request, send);
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** `false` on NotFound: deleting what is already gone is success. */
export async function deleted(request: ApiRequest, send: () => Promise<unknown>): Promise<boolean> {
  return (await getOrUndefined(request, send)) !== undefined;
}

export function listOf<T>(list: { items?: T[]; metadata?: { resourceVersion?: string } }): ListResult<T> {
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion };
}

/** The core v1 Event for an input, as client-go's recorder shapes it (count 1, first = last time). */
export function eventFor(
  input: EventInput,
  source: { component: string; reportingInstance?: string | undefined; at: Date },
): CoreV1Event & { metadata: { generateName: string } } {
  const { involvedObject: o } = input;
  const involved: CoreV1Event['involvedObject'] = { apiVersion: o.apiVersion, kind: o.kind, name: o.name };
  if (o.namespace) involved.namespace = o.namespace;
  if (o.uid) involved.uid = o.uid;
  if (o.resourceVersion) involved.resourceVersion = o.resourceVersion;
  const event: CoreV1Event & { metadata: { generateName: string } } = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${o.name}.`, namespace: o.namespace ?? 'default' },
    involvedObject: involved,
    type: input.type,
    reason: input.reason,
    message: input.message,
    source: { component: source.component },
    reportingComponent: source.component,
    firstTimestamp: source.at,
    lastTimestamp: source.at,
    count: 1,
  };
  if (source.reportingInstance) event.reportingInstance = source.reportingInstance;
  return event;
}

/** The calls one resource offers; each implementation builds these per resource. */
export interface ResourceCalls<T> {
  get(namespace: string, name: string, options?: ReadOptions): Promise<T | undefined>;
  list(namespace: string | undefined, options?: ListOptions): Promise<ListResult<T>>;
  create(obj: T): Promise<T>;
  update(obj: T, options?: WriteOptions): Promise<T>;
  patch(namespace: string, name: string, patch: Patch, options?: WriteOptions): Promise<T>;
  delete(namespace: string, name: string, options?: DeleteOptions): Promise<boolean>;
}

/** A GET of a cluster-scoped object. */
export interface ClusterGet<T> {
  get(name: string, options?: ReadOptions): Promise<T | undefined>;
}

/** Pods are created into a namespace argument rather than their own metadata's. */
export interface PodCalls extends Pick<ResourceCalls<V1Pod>, 'get' | 'delete' | 'patch'> {
  list(namespace: string, options?: ListOptions): Promise<ListResult<V1Pod>>;
  create(namespace: string, pod: V1Pod): Promise<V1Pod>;
}

/** What an implementation provides; {@link kubeClientFrom} names it as the {@link KubeClient}. */
export interface KubeClientParts {
  readonly vmis: ResourceCalls<VirtualMachineInstance>;
  readonly vms: ResourceCalls<VirtualMachine>;
  readonly migrations: ResourceCalls<VirtualMachineInstanceMigration>;
  readonly kubevirts: Pick<ResourceCalls<KubeVirt>, 'get' | 'list'>;
  readonly dataVolumes: Pick<ResourceCalls<DataVolume>, 'get' | 'create'>;
  readonly pods: PodCalls;
  readonly pvcs: Pick<ResourceCalls<V1PersistentVolumeClaim>, 'get'>;
  /** Cluster-scoped: listed with `namespace` undefined. */
  readonly migrationPolicies: Pick<ResourceCalls<MigrationPolicy>, 'list'>;
  readonly namespaces: ClusterGet<V1Namespace>;
  readonly nodes: ClusterGet<V1Node>;
  createEvent(input: EventInput): Promise<void>;
}

/** The one mapping from per-resource calls to the {@link KubeClient} methods. */
export function kubeClientFrom(p: KubeClientParts): KubeClient {
  return {
    getVMI: p.vmis.get,
    getVM: p.vms.get,
    getMigration: p.migrations.get,
    getKubeVirt: p.kubevirts.get,
    getDataVolume: p.dataVolumes.get,
    getPod: p.pods.get,
    getPVC: p.pvcs.get,
    getNamespace: p.namespaces.get,
    getNode: p.nodes.get,
    listPods: p.pods.list,
    listMigrations: p.migrations.list,
    listKubeVirts: p.kubevirts.list,
    listMigrationPolicies: (options) => p.migrationPolicies.list(undefined, options),
    createPod: p.pods.create,
    deletePod: p.pods.delete,
    patchPod: p.pods.patch,
    createVMI: p.vmis.create,
    updateVMI: p.vmis.update,
    patchVMI: p.vmis.patch,
    deleteVMI: p.vmis.delete,
    createVM: p.vms.create,
    updateVM: p.vms.update,
    patchVM: p.vms.patch,
    createMigration: p.migrations.create,
    updateMigration: p.migrations.update,
    patchMigration: p.migrations.patch,
    deleteMigration: p.migrations.delete,
    createDataVolume: p.dataVolumes.create,
    createEvent: p.createEvent,
  };
}
