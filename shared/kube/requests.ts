/**
 * Everything of a {@link KubeClient} call that does not depend on the transport, shared by both
 * implementations (client-node.ts over `@kubernetes/client-node`, http-client.ts over `node:http`)
 * so that they send the same requests and answer the same way: scope checks, URL paths, query
 * parameters, delete and patch bodies, the Event body, the "missing is an answer" wrappers — and
 * {@link genericKubeClient}, the verbs themselves. A transport implements one function,
 * {@link Transport.send}: an {@link Operation} in, the parsed JSON answer out.
 *
 * Nothing here imports `@kubernetes/client-node` at runtime (type imports only): this module is
 * bundled into every Lambda function.
 */
import type { CoreV1Event, V1DeleteOptions } from '@kubernetes/client-node';
import { EVENTS, PODS, resourceName, type Resource, type ResourceCoordinates, type Subresource } from '../api/resources.ts';
import { InvalidInputError } from '../errors.ts';
import type { DeleteOptions, EventInput, KubeClient, KubeObject, ListOptions, ListResult, Patch, ReadOptions, Scale } from './client.ts';
import { reviveNamespaceDates, reviveNodeDates, revivePodDates, revivePvcDates } from './core-dates.ts';
import { NotFoundError, retryAfterAnswer, toKubeError, type ApiRequest, type Verb } from './errors.ts';
import { judgedByVirtApiIdentity } from './kubevirt-identity.ts';

/** Settings shared by both {@link KubeClient} factories. */
export interface KubeClientOptions {
  /** Event `source.component`; KubeVirt's controllers report as `virtualmachine-controller`. */
  readonly component?: string;
  /** Event `reportingInstance` (e.g. the Lambda function name or the host). */
  readonly reportingInstance?: string;
  /** Clock for event timestamps; the edge is the only place that reads the wall clock. */
  readonly now?: () => Date;
  /**
   * Send every write with `dryRun=All` (shadow mode, docs/cutover.md): the API server admits,
   * validates, defaults and answers as for a real write, and persists nothing. Reads are unchanged.
   */
  readonly dryRun?: boolean;
  /**
   * The user to impersonate on the writes virt-api judges by identity (kubevirt-identity.ts
   * `judgedByVirtApiIdentity`): KubeVirt's controller, `kubevirtControllerUser(<KubeVirt
   * namespace>)`. Unset: every request goes as the client's own identity (a cluster without virt-api).
   */
  readonly impersonateKubeVirtController?: string | undefined;
  /** Retrying an answer that carries `Retry-After` inside the request ({@link RetryAfterPolicy}; default {@link RETRY_AFTER}). */
  readonly retryAfter?: Partial<RetryAfterPolicy>;
}

/**
 * client-go's REST client retries an answer that carries `Retry-After` — a 429 from API Priority
 * and Fairness or max-in-flight, a 5xx a server asks to be retried — after that many seconds, up
 * to 10 times (`rest.Request`'s default `maxRetries`), before the caller sees an error; KubeVirt's
 * controllers never see most 429s. Ours do the same, narrower where a retry could act twice:
 * - a 429 is retried for every verb: the server refused it before doing anything;
 * - a 5xx only for reads (get, list): a write it answered may have been done (a 504 with
 *   `Retry-After` after the object was stored), and a second `generateName` create or JSON-patch
 *   append would not be idempotent — the write's error goes to the queue's backoff instead;
 * - never an eviction (a disruption budget's 429 asks for 10 s; the caller treats a refused
 *   eviction as an answer, as `kubectl drain` does);
 * - a wait longer than `maxWaitSeconds` is not slept inside a function (a Lambda is billed for it
 *   and has a deadline): the error goes to the queue's backoff.
 */
export interface RetryAfterPolicy {
  readonly maxRetries: number;
  readonly maxWaitSeconds: number;
  /** Told of each retry (metrics, a chaos run's count of the 429s the controllers met). */
  readonly onRetry?: (retry: { readonly request: ApiRequest; readonly status: number; readonly seconds: number }) => void;
  /** How a wait is slept (tests). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** {@link RetryAfterPolicy}'s defaults: client-go's 10 retries, waits of up to 5 s. */
export const RETRY_AFTER: RetryAfterPolicy = { maxRetries: 10, maxWaitSeconds: 5 };

/** Whether {@link RetryAfterPolicy} retries this answer to this operation. */
function retriable(o: Operation, status: number): boolean {
  if (o.subresource === 'eviction') return false;
  return status === 429 || o.verb === 'get' || o.verb === 'list';
}

/** Default Event source component, as KubeVirt's virt-controller reports it. */
export const DEFAULT_EVENT_COMPONENT = 'virtualmachine-controller';

/** Patch Content-Types (docs/kube-client.md, "client-node as it behaves on the wire": client-node defaults to json-patch whatever the body). */
export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
/** Core types only: custom resources answer 415. */
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/**
 * `/api/v1/namespaces/<ns>/pods/<name>[/status]` or `/apis/<group>/<version>/…`; without a
 * namespace, the all-namespaces collection.
 */
export function resourcePath(res: ResourceCoordinates, namespace?: string, name?: string, subresource?: Subresource): string {
  const parts = [res.group === '' ? `/api/${res.version}` : `/apis/${res.group}/${res.version}`];
  if (namespace !== undefined) parts.push('namespaces', encodeURIComponent(namespace));
  parts.push(res.plural);
  if (name !== undefined) parts.push(encodeURIComponent(name));
  if (subresource !== undefined) parts.push(subresource);
  return parts.join('/');
}

/** The request description errors and the call counter use (`virtualmachineinstancereplicasets/scale` for a subresource other than status). */
export function apiRequest(res: ResourceCoordinates, verb: ApiRequest['verb'], namespace?: string, name?: string, subresource?: Subresource): ApiRequest {
  return { verb, resource: subresource === 'scale' || subresource === 'eviction' ? `${res.plural}/${subresource}` : res.plural, namespace, name };
}

/** Query of a GET: `resourceVersion` for a "not older than" read (docs/architecture.md §3). */
export function readParams(options: ReadOptions | undefined): Query {
  return options?.resourceVersion ? { resourceVersion: options.resourceVersion } : {};
}

/** Query of a LIST: selectors, paging, and NotOlderThan when a resourceVersion is given (docs/architecture.md §3). */
export function listParams(options: ListOptions | undefined): Query {
  const p: Record<string, string | number> = {};
  if (options?.labelSelector) p.labelSelector = options.labelSelector;
  if (options?.fieldSelector) p.fieldSelector = options.fieldSelector;
  if (options?.limit !== undefined) p.limit = options.limit;
  if (options?.continue) p.continue = options.continue;
  if (options?.resourceVersion) {
    p.resourceVersion = options.resourceVersion;
    p.resourceVersionMatch = 'NotOlderThan';
  }
  return p;
}

/**
 * Query of a DELETE: the grace period, but only when there is no body — kube-apiserver reads
 * DeleteOptions from the body when there is one and then ignores the query (a grace period of 0
 * in the query beside preconditions in the body is silently dropped).
 */
export function deleteParams(options: DeleteOptions | undefined): Query {
  if (deleteBody(options) !== undefined) return {};
  return options?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {};
}

/** Body of a DELETE: only when there are preconditions or a propagation policy (else no body); it then carries the grace period too. */
export function deleteBody(options: DeleteOptions | undefined): V1DeleteOptions | undefined {
  if (!options?.preconditions && !options?.propagationPolicy) return undefined;
  const body: V1DeleteOptions = {};
  if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
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

/**
 * Checks `namespace` against the resource's scope before any request: a namespaced resource
 * needs one (except to list across namespaces), a cluster-scoped one must have none.
 */
export function checkScope(res: ResourceCoordinates, namespace: string | undefined, allNamespaces = false): string | undefined {
  if (res.namespaced && (namespace === undefined || namespace === '') && !allNamespaces) {
    throw new InvalidInputError(`${res.kind}.metadata.namespace`, `${resourceName(res)} is namespaced: a namespace is required`);
  }
  if (!res.namespaced && namespace !== undefined && namespace !== '') {
    throw new InvalidInputError(`${res.kind}.metadata.namespace`, `${resourceName(res)} is cluster-scoped: no namespace, got '${namespace}'`);
  }
  return namespace === '' ? undefined : namespace;
}

/** Checks that the resource serves `subresource` (from its descriptor) before any request. */
export function checkSubresource(res: Resource, subresource: Subresource | undefined): void {
  if (subresource !== undefined && !res.subresources.includes(subresource)) {
    throw new InvalidInputError(`${res.kind}/${subresource}`, `${resourceName(res)} has no /${subresource} subresource`);
  }
}

/** Namespace and name of an object about to be written, checked against the resource's scope. */
export function identity(obj: KubeObject, res: ResourceCoordinates, needName: boolean): { namespace: string | undefined; name: string } {
  const namespace = checkScope(res, obj.metadata?.namespace);
  const name = obj.metadata?.name ?? '';
  if (needName && !name) throw new InvalidInputError(`${res.kind}.metadata.name`, 'must be set to update the object');
  return { namespace, name };
}

/**
 * Turns the timestamps of core objects into `Date`s, as client-node's models have them (docs/kube-client.md,
 * "client-node as it behaves on the wire"); every other object is left as the JSON it came as.
 */
export function reviverFor(res: ResourceCoordinates): (o: unknown) => unknown {
  if (res.group !== '') return (o) => o;
  switch (res.kind) {
    case 'Pod':
      return revivePodDates;
    case 'PersistentVolumeClaim':
      return revivePvcDates;
    case 'Namespace':
      return reviveNamespaceDates;
    case 'Node':
      return reviveNodeDates;
    default:
      return (o) => o;
  }
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

export function listOf<T>(list: RawList<T>): ListResult<T> {
  // Losing the token would end a relist after its first page and report every later object as deleted.
  const continueToken = list.metadata?.continue || list.metadata?._continue || undefined;
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion, ...(continueToken ? { continueToken } : {}) };
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

/** Query parameters of a request. */
export type Query = Readonly<Record<string, string | number>>;

/**
 * One request, transport-neutral: what to do (`verb`, and the HTTP method it is), to which
 * resource and object, with which query and body. {@link resourcePath} makes its URL path.
 */
export interface Operation {
  readonly verb: Verb;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly res: ResourceCoordinates;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  readonly subresource?: Subresource | undefined;
  readonly query: Query;
  readonly body?: unknown;
  /** Of the body; `application/json` unless a patch says otherwise. */
  readonly contentType?: string | undefined;
  /** Sent as `Impersonate-User` (kubevirt-identity.ts): the request acts as this user. */
  readonly impersonateUser?: string | undefined;
}

/** The URL path of an operation: creates and lists address the collection. */
export function operationPath(o: Operation): string {
  // A create addresses the collection, except a pod's eviction (a create on the pod).
  const collection = (o.verb === 'create' && o.subresource !== 'eviction') || o.verb === 'list';
  return resourcePath(o.res, o.namespace, collection ? undefined : o.name, collection ? undefined : o.subresource);
}

/** What a transport provides: one request sent, its 2xx answer parsed (or thrown as it came). */
export interface Transport {
  send(op: Operation): Promise<unknown>;
}

/**
 * The object with the descriptor's apiVersion and kind, as client-go's typed clients send it: a
 * custom resource body without them is refused by kube-apiserver (400 "Object 'Kind' is
 * missing"), since CRs decode as unstructured objects that carry their own type.
 */
export function typed<T extends KubeObject>(res: ResourceCoordinates, obj: T): T {
  return { ...obj, apiVersion: res.group ? `${res.group}/${res.version}` : res.version, kind: res.kind };
}

function op(verb: Verb, res: ResourceCoordinates, fields: Omit<Operation, 'verb' | 'method' | 'res' | 'query'> & { query?: Query }): Operation {
  const method = ({ get: 'GET', list: 'GET', create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' } as const)[verb];
  return { verb, method, res, query: {}, ...fields };
}

/**
 * The {@link KubeClient} over a transport: scope and subresource checks, the request, error
 * mapping (errors.ts), "missing is an answer", and core dates. Both implementations are this.
 */
export function genericKubeClient(transport: Transport, options: KubeClientOptions = {}): KubeClient {
  const now = options.now ?? (() => new Date());
  const component = options.component ?? DEFAULT_EVENT_COMPONENT;
  const req = (o: Operation): ApiRequest => apiRequest(o.res, o.verb, o.namespace, o.name, o.subresource);
  // One place for dry runs and identity: every write operation passes through `op` below, reads
  // never carry a dry run. The writes virt-api judges by identity go as KubeVirt's controller;
  // every other request as our own.
  const asUser = options.impersonateKubeVirtController;
  const dressed = (o: Operation): Operation => {
    const d = options.dryRun ? dryRunOf(o) : o;
    return asUser && judgedByVirtApiIdentity(o) ? { ...d, impersonateUser: asUser } : d;
  };
  const policy: RetryAfterPolicy = { ...RETRY_AFTER, ...options.retryAfter };
  const pause = policy.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const send = async (o: Operation): Promise<unknown> => {
    const d = dressed(o);
    for (let retries = 0; ; retries++) {
      try {
        return await transport.send(d);
      } catch (err) {
        const answer = retryAfterAnswer(err);
        if (!answer || retries >= policy.maxRetries || answer.seconds > policy.maxWaitSeconds || !retriable(o, answer.status)) throw err;
        policy.onRetry?.({ request: req(o), status: answer.status, seconds: answer.seconds });
        await pause(answer.seconds * 1000);
      }
    }
  };
  const run = (o: Operation): Promise<unknown> => call(req(o), () => send(o));
  return {
    get: async <T>(res: Resource<T>, namespace: string | undefined, name: string, opts?: ReadOptions) => {
      const o = op('get', res, { namespace: checkScope(res, namespace), name, query: readParams(opts) });
      const got = await getOrUndefined(req(o), () => send(o));
      return got === undefined ? undefined : (reviverFor(res)(got) as T);
    },
    list: async <T>(res: Resource<T>, namespace: string | undefined, opts?: ListOptions) => {
      const o = op('list', res, { namespace: checkScope(res, namespace, true), query: listParams(opts) });
      const list = listOf(((await run(o)) ?? {}) as RawList<T>);
      const revive = reviverFor(res);
      return { ...list, items: list.items.map((i) => revive(i) as T) };
    },
    create: async <T extends KubeObject>(res: Resource<T>, obj: T) => {
      const { namespace, name } = identity(obj, res, false);
      // The name is for error messages only: a POST goes to the collection (generateName works too).
      return reviverFor(res)(await run(op('create', res, { namespace, name: name || obj.metadata?.generateName, body: typed(res, obj) }))) as T;
    },
    update: async <T extends KubeObject>(res: Resource<T>, obj: T, opts?: { subresource?: 'status' | undefined }) => {
      checkSubresource(res, opts?.subresource);
      const { namespace, name } = identity(obj, res, true);
      return reviverFor(res)(await run(op('update', res, { namespace, name, subresource: opts?.subresource, body: typed(res, obj) }))) as T;
    },
    patch: async <T>(res: Resource<T>, namespace: string | undefined, name: string, patch: Patch, opts?: { subresource?: 'status' | undefined }) => {
      checkSubresource(res, opts?.subresource);
      const o = op('patch', res, { namespace: checkScope(res, namespace), name, subresource: opts?.subresource, body: patchBody(patch), contentType: patchContentType(patch) });
      return reviverFor(res)(await run(o)) as T;
    },
    delete: async <T>(res: Resource<T>, namespace: string | undefined, name: string, opts?: DeleteOptions) => {
      const body = deleteBody(opts);
      const o = op('delete', res, { namespace: checkScope(res, namespace), name, query: deleteParams(opts), ...(body ? { body } : {}) });
      return deleted(req(o), () => send(o));
    },
    getScale: async (res: Resource, namespace: string | undefined, name: string, opts?: ReadOptions) => {
      checkSubresource(res, 'scale');
      const o = op('get', res, { namespace: checkScope(res, namespace), name, subresource: 'scale', query: readParams(opts) });
      return (await getOrUndefined(req(o), () => send(o))) as Scale | undefined;
    },
    updateScale: async (res: Resource, namespace: string | undefined, name: string, replicas: number) => {
      checkSubresource(res, 'scale');
      if (!Number.isInteger(replicas) || replicas < 0) throw new InvalidInputError(`${res.kind}/scale.spec.replicas`, `must be a whole number ≥ 0, got ${replicas}`);
      const patch: Patch = { type: 'merge', body: { spec: { replicas } } };
      const o = op('patch', res, { namespace: checkScope(res, namespace), name, subresource: 'scale', body: patchBody(patch), contentType: patchContentType(patch) });
      return (await run(o)) as Scale;
    },
    createEvent: async (input: EventInput) => {
      const namespace = input.involvedObject.namespace ?? 'default';
      const body = eventFor(input, { component: input.component ?? component, reportingInstance: options.reportingInstance, at: now() });
      await run(op('create', EVENTS, { namespace, name: body.metadata.generateName, body }));
    },
    evict: async (namespace: string, podName: string) => {
      const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: podName, namespace }, deleteOptions: {} };
      await run(op('create', PODS, { namespace, name: podName, subresource: 'eviction', body }));
    },
  };
}

/**
 * The operation as a dry run: `dryRun=All` in the query of a write; a DELETE that has a body gets
 * it in the body too (kube-apiserver then reads DeleteOptions from the body alone, see deleteParams).
 */
export function dryRunOf(o: Operation): Operation {
  if (o.verb === 'get' || o.verb === 'list') return o;
  const body = o.verb === 'delete' && o.body !== undefined ? { body: { ...(o.body as object), dryRun: ['All'] } } : {};
  const eviction = o.subresource === 'eviction' && o.body !== undefined ? { body: { ...(o.body as { deleteOptions?: object }), deleteOptions: { ...(o.body as { deleteOptions?: object }).deleteOptions, dryRun: ['All'] } } } : {};
  return { ...o, query: { ...o.query, dryRun: 'All' }, ...body, ...eviction };
}

interface RawList<T> {
  items?: T[];
  /** Raw JSON says `continue`; client-node's typed models (V1ListMeta) say `_continue`. */
  metadata?: { resourceVersion?: string; continue?: string; _continue?: string };
}
