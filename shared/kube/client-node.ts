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
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type CoreV1Event,
  type KubeConfig,
  type ObservableMiddleware,
  type V1DeleteOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import type { DataVolume, KubeVirt, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/index.ts';
import { DATA_VOLUMES, EVENTS, KUBEVIRTS, MIGRATIONS, PODS, PVCS, VMIS, VMS, type ResourceCoordinates } from '../api/resources.ts';
import { InvalidInputError } from '../errors.ts';
import type { DeleteOptions, EventInput, KubeClient, ListOptions, ListResult, Patch, ReadOptions, WriteOptions } from './client.ts';
import { NotFoundError, toKubeError, type ApiRequest } from './errors.ts';

/** Settings for {@link createKubeClient}. */
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
  return setHeaderOptions('Content-Type', patch.type === 'merge' ? PatchStrategy.MergePatch : PatchStrategy.JsonPatch);
}

function patchBody(patch: Patch): object {
  return patch.type === 'merge' ? patch.body : patch.ops;
}

function deleteBody(options: DeleteOptions | undefined): V1DeleteOptions | undefined {
  if (!options?.preconditions && !options?.propagationPolicy) return undefined;
  const body: V1DeleteOptions = {};
  if (options.preconditions) body.preconditions = { ...options.preconditions };
  if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
  return body;
}

/** Namespace and name of an object about to be written; both must be set. */
function identity(obj: { metadata?: { namespace?: string; name?: string; generateName?: string } }, kind: string, needName: boolean): { namespace: string; name: string } {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  if (!namespace) throw new InvalidInputError(`${kind}.metadata.namespace`, 'must be set to write the object');
  if (needName && !name) throw new InvalidInputError(`${kind}.metadata.name`, 'must be set to update the object');
  return { namespace, name };
}

async function call<T>(request: ApiRequest, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    throw toKubeError(err, request);
  }
}

/** `undefined` on NotFound: a missing object is an answer, not a failure. */
async function getOrUndefined<T>(request: ApiRequest, send: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call(request, send);
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** `false` on NotFound: deleting what is already gone is success. */
async function deleted(request: ApiRequest, send: () => Promise<unknown>): Promise<boolean> {
  return (await getOrUndefined(request, send)) !== undefined;
}

function listOf<T>(list: { items?: T[]; metadata?: { resourceVersion?: string } }): ListResult<T> {
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion };
}

/** Read parameters for a list: NotOlderThan when a resourceVersion is given (DESIGN.md §3). */
function listParams(options: ListOptions | undefined): {
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

/** The CRUD a custom resource needs, over CustomObjectsApi (raw JSON in and out). */
function customResource<T extends { metadata?: { namespace?: string; name?: string } }>(api: CustomObjectsApi, res: ResourceCoordinates) {
  const at = { group: res.group, version: res.version, plural: res.plural };
  const req = (verb: ApiRequest['verb'], namespace?: string, name?: string): ApiRequest => ({ verb, resource: res.plural, namespace, name });
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
          ...(options?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
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
  const coreReq = (res: ResourceCoordinates, verb: ApiRequest['verb'], namespace: string, name?: string): ApiRequest => ({
    verb,
    resource: res.plural,
    namespace,
    name,
  });

  return {
    getVMI: vmis.get,
    getVM: vms.get,
    getMigration: migrations.get,
    getKubeVirt: kubevirts.get,
    getDataVolume: dataVolumes.get,
    getPod: (namespace, name, opts) =>
      getOrUndefined(coreReq(PODS, 'get', namespace, name), () =>
        core.readNamespacedPod({ namespace, name }, withQuery({ resourceVersion: opts?.resourceVersion })),
      ),
    getPVC: (namespace, name, opts) =>
      getOrUndefined(coreReq(PVCS, 'get', namespace, name), () =>
        core.readNamespacedPersistentVolumeClaim({ namespace, name }, withQuery({ resourceVersion: opts?.resourceVersion })),
      ),
    listPods: async (namespace, opts) =>
      listOf(await call(coreReq(PODS, 'list', namespace), () => core.listNamespacedPod({ namespace, ...listParams(opts) }))),
    listMigrations: migrations.list,
    listKubeVirts: kubevirts.list,
    createPod: (namespace, pod: V1Pod) => call(coreReq(PODS, 'create', namespace, pod.metadata?.name), () => core.createNamespacedPod({ namespace, body: pod })),
    deletePod: (namespace, name, opts) =>
      deleted(coreReq(PODS, 'delete', namespace, name), () =>
        core.deleteNamespacedPod({
          namespace,
          name,
          ...(opts?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
          ...(deleteBody(opts) ? { body: deleteBody(opts) } : {}),
        }),
      ),
    createVMI: vmis.create,
    updateVMI: vmis.update,
    patchVMI: vmis.patch,
    deleteVMI: vmis.delete,
    createVM: vms.create,
    updateVM: vms.update,
    patchVM: vms.patch,
    createMigration: migrations.create,
    updateMigration: migrations.update,
    patchMigration: migrations.patch,
    deleteMigration: migrations.delete,
    createDataVolume: dataVolumes.create,
    createEvent: async (input: EventInput) => {
      const namespace = input.involvedObject.namespace ?? 'default';
      const body = eventFor(input, { component, reportingInstance: options.reportingInstance, at: now() });
      await call(coreReq(EVENTS, 'create', namespace, body.metadata.generateName), () => core.createNamespacedEvent({ namespace, body }));
    },
  };
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
