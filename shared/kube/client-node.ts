/**
 * {@link KubeClient} over `@kubernetes/client-node` 2.0.1. Create one per process (cold start)
 * and share it; wrap it per reconcile with `countingKubeClient`.
 *
 * Protocol notes (kube-api.md Part 1):
 * - client-node sends every patch as `application/json-patch+json` unless told otherwise, so each
 *   patch call sets the Content-Type from the patch type;
 * - its GET methods have no `resourceVersion` parameter, so "not older than" reads add the query
 *   parameter through a request middleware;
 * - custom objects come back as raw JSON; core objects as models (Date timestamps, unknown fields
 *   dropped).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  Observable,
  setHeaderOptions,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1Pod,
} from '@kubernetes/client-node';
import type { DataVolume, KubeVirt, MigrationPolicy, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/index.ts';
import { DATA_VOLUMES, EVENTS, KUBEVIRTS, MIGRATION_POLICIES, MIGRATIONS, PODS, PVCS, VMIS, VMS, type ResourceCoordinates } from '../api/resources.ts';
import type { DeleteOptions, EventInput, KubeClient, ListOptions, ListResult, Patch, ReadOptions, WriteOptions } from './client.ts';
import type { ApiRequest } from './errors.ts';
import {
  apiRequest,
  call,
  DEFAULT_EVENT_COMPONENT,
  deleteBody,
  deleted,
  deleteParams,
  eventFor,
  getOrUndefined,
  identity,
  kubeClientFrom,
  listOf,
  listParams,
  NAMESPACES,
  NODES,
  patchBody,
  patchContentType,
  type KubeClientOptions,
  type ResourceCalls,
} from './requests.ts';

// Moved to requests.ts (shared with http-client.ts); re-exported for existing importers.
export { DEFAULT_EVENT_COMPONENT, eventFor, type KubeClientOptions } from './requests.ts';

type Options = ConfigurationOptions<ObservableMiddleware>;

/** Adds query parameters the generated method does not expose. */
function withQuery(params: Readonly<Record<string, string | undefined>>, base?: Options): Options | undefined {
  const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '');
  if (entries.length === 0) return base;
  const middleware: ObservableMiddleware = {
    pre: (ctx) => {
      for (const [k, v] of entries) ctx.setQueryParam(k, v);
      return new Observable(Promise.resolve(ctx));
    },
    post: (res) => new Observable(Promise.resolve(res)),
  };
  return { ...base, middleware: [...(base?.middleware ?? []), middleware], middlewareMergeStrategy: 'append' };
}

function patchOptions(patch: Patch): Options {
  return setHeaderOptions('Content-Type', patchContentType(patch));
}

/** The CRUD a custom resource needs, over CustomObjectsApi (raw JSON in and out). */
function customResource<T extends { metadata?: { namespace?: string; name?: string } }>(api: CustomObjectsApi, res: ResourceCoordinates): ResourceCalls<T> {
  const at = { group: res.group, version: res.version, plural: res.plural };
  const req = (verb: ApiRequest['verb'], namespace?: string, name?: string): ApiRequest => apiRequest(res, verb, namespace, name);
  return {
    get: (namespace: string, name: string, options?: ReadOptions): Promise<T | undefined> =>
      getOrUndefined(req('get', namespace, name), () =>
        api.getNamespacedCustomObject({ ...at, namespace, name }, withQuery({ resourceVersion: options?.resourceVersion })),
      ) as Promise<T | undefined>,
    list: (namespace: string | undefined, options?: ListOptions): Promise<ListResult<T>> =>
      call(req('list', namespace), () =>
        namespace === undefined
          ? api.listClusterCustomObject({ ...at, ...listParams(options) })
          : api.listNamespacedCustomObject({ ...at, namespace, ...listParams(options) }),
      ).then((list: { items?: T[]; metadata?: { resourceVersion?: string } }) => listOf(list)),
    create: (obj: T): Promise<T> => {
      const { namespace, name } = identity(obj, res.kind, false);
      return call(req('create', namespace, name), () => api.createNamespacedCustomObject({ ...at, namespace, body: obj }));
    },
    update: (obj: T, options?: WriteOptions): Promise<T> => {
      const { namespace, name } = identity(obj, res.kind, true);
      const params = { ...at, namespace, name, body: obj };
      return call(req('update', namespace, name), () =>
        options?.subresource === 'status' ? api.replaceNamespacedCustomObjectStatus(params) : api.replaceNamespacedCustomObject(params),
      );
    },
    patch: (namespace: string, name: string, patch: Patch, options?: WriteOptions): Promise<T> => {
      const params = { ...at, namespace, name, body: patchBody(patch) };
      return call(req('patch', namespace, name), () =>
        options?.subresource === 'status'
          ? api.patchNamespacedCustomObjectStatus(params, patchOptions(patch))
          : api.patchNamespacedCustomObject(params, patchOptions(patch)),
      );
    },
    delete: (namespace: string, name: string, options?: DeleteOptions): Promise<boolean> =>
      deleted(req('delete', namespace, name), () =>
        api.deleteNamespacedCustomObject({
          ...at,
          namespace,
          name,
          ...deleteParams(options),
          ...(deleteBody(options) ? { body: deleteBody(options) } : {}),
        }),
      ),
  };
}

/** The client-node implementation of {@link KubeClient}. */
export function createKubeClient(kubeConfig: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const now = options.now ?? (() => new Date());
  const component = options.component ?? DEFAULT_EVENT_COMPONENT;
  const vmis = customResource<VirtualMachineInstance>(custom, VMIS);
  const vms = customResource<VirtualMachine>(custom, VMS);
  const migrations = customResource<VirtualMachineInstanceMigration>(custom, MIGRATIONS);
  const kubevirts = customResource<KubeVirt>(custom, KUBEVIRTS);
  const dataVolumes = customResource<DataVolume>(custom, DATA_VOLUMES);
  const migrationPolicies = customResource<MigrationPolicy>(custom, MIGRATION_POLICIES);
  const coreReq = (res: ResourceCoordinates, verb: ApiRequest['verb'], namespace: string | undefined, name?: string): ApiRequest => apiRequest(res, verb, namespace, name);

  return kubeClientFrom({
    vmis,
    vms,
    migrations,
    kubevirts,
    dataVolumes,
    pods: {
      get: (namespace, name, opts) =>
        getOrUndefined(coreReq(PODS, 'get', namespace, name), () =>
          core.readNamespacedPod({ namespace, name }, withQuery({ resourceVersion: opts?.resourceVersion })),
        ),
      list: async (namespace, opts) =>
        listOf(await call(coreReq(PODS, 'list', namespace), () => core.listNamespacedPod({ namespace, ...listParams(opts) }))),
      create: (namespace, pod: V1Pod) =>
        call(coreReq(PODS, 'create', namespace, pod.metadata?.name), () => core.createNamespacedPod({ namespace, body: pod })),
      delete: (namespace, name, opts) =>
        deleted(coreReq(PODS, 'delete', namespace, name), () =>
          core.deleteNamespacedPod({ namespace, name, ...deleteParams(opts), ...(deleteBody(opts) ? { body: deleteBody(opts) } : {}) }),
        ),
      patch: (namespace, name, patch, opts) =>
        call(coreReq(PODS, 'patch', namespace, name), () =>
          opts?.subresource === 'status'
            ? core.patchNamespacedPodStatus({ namespace, name, body: patchBody(patch) }, patchOptions(patch))
            : core.patchNamespacedPod({ namespace, name, body: patchBody(patch) }, patchOptions(patch)),
        ),
    },
    pvcs: {
      get: (namespace, name, opts) =>
        getOrUndefined(coreReq(PVCS, 'get', namespace, name), () =>
          core.readNamespacedPersistentVolumeClaim({ namespace, name }, withQuery({ resourceVersion: opts?.resourceVersion })),
        ),
    },
    migrationPolicies,
    namespaces: {
      get: (name, opts) =>
        getOrUndefined(coreReq(NAMESPACES, 'get', undefined, name), () => core.readNamespace({ name }, withQuery({ resourceVersion: opts?.resourceVersion }))),
    },
    nodes: {
      get: (name, opts) => getOrUndefined(coreReq(NODES, 'get', undefined, name), () => core.readNode({ name }, withQuery({ resourceVersion: opts?.resourceVersion }))),
    },
    createEvent: async (input: EventInput) => {
      const namespace = input.involvedObject.namespace ?? 'default';
      const body = eventFor(input, { component, reportingInstance: options.reportingInstance, at: now() });
      await call(coreReq(EVENTS, 'create', namespace, body.metadata.generateName), () => core.createNamespacedEvent({ namespace, body }));
    },
  });
}
