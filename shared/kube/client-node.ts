/**
 * {@link KubeClient} over `@kubernetes/client-node` 2.0.1: the relay, the local runtime and the
 * tools use it (the Lambda functions use http-client.ts). Create one per process (cold start) and
 * share it; wrap it per reconcile with `countingKubeClient`.
 *
 * The verbs are requests.ts's {@link genericKubeClient}; this file is only the transport, and it
 * has no per-resource code: every request goes through client-node's `CustomObjectsApi`, whose
 * methods take the group, version and plural as arguments and answer raw JSON — so any resource
 * of shared/api/resources.ts, custom or core, namespaced or cluster-scoped, with or without a
 * subresource, is the same call. Protocol notes (docs/kube-client.md, "client-node as it behaves on the wire"):
 * - the core group lives at `/api/v1`, not `/apis/<group>/v1`: `CustomObjectsApi` would build
 *   `/apis//v1/…` for group `''`, so a request middleware rewrites that prefix;
 * - client-node's generated methods lack some query parameters (`resourceVersionMatch`, `limit` on
 *   some verbs…), so the operation's query is set by a middleware too, the same for every verb;
 * - client-node sends every patch as `application/json-patch+json` unless told otherwise, so each
 *   patch sets the Content-Type from the patch type;
 * - `makeApiClient` opens a new connection per request: the API client authenticates through
 *   connections.ts, which keeps them.
 */
import { CustomObjectsApi, Observable, setHeaderOptions, type ConfigurationOptions, type KubeConfig, type ObservableMiddleware } from '@kubernetes/client-node';
import type { KubeClient } from './client.ts';
import { pooledApiClient } from './connections.ts';
import { IMPERSONATE_USER_HEADER } from './kubevirt-identity.ts';
import { genericKubeClient, type KubeClientOptions, type Operation, type Query } from './requests.ts';

export { DEFAULT_EVENT_COMPONENT, eventFor, type KubeClientOptions } from './requests.ts';

type Options = ConfigurationOptions<ObservableMiddleware>;

/** Rewrites the core group's path and sets the operation's query parameters. */
function requestOptions(query: Query, contentType: string | undefined, pathSuffix = '', impersonateUser?: string): Options {
  const middleware: ObservableMiddleware = {
    pre: (ctx) => {
      let url = ctx.getUrl();
      if (url.includes('/apis//')) url = url.replace('/apis//', '/api/');
      // A pod's eviction: CustomObjectsApi only knows collections, so the path is extended here.
      if (pathSuffix) url = url.replace(/(\?|$)/, `${pathSuffix}$1`);
      ctx.setUrl(url);
      for (const [k, v] of Object.entries(query)) ctx.setQueryParam(k, String(v));
      // After authentication's headers: this request's own impersonation wins over a kubeconfig's.
      if (impersonateUser) ctx.setHeaderParam(IMPERSONATE_USER_HEADER, impersonateUser);
      return new Observable(Promise.resolve(ctx));
    },
    post: (res) => new Observable(Promise.resolve(res)),
  };
  const base = contentType ? setHeaderOptions('Content-Type', contentType) : {};
  return { ...base, middleware: [...(base.middleware ?? []), middleware], middlewareMergeStrategy: 'append' };
}

/** The `CustomObjectsApi` call of one operation: by verb, scope and subresource, never by resource. */
function dispatch(api: CustomObjectsApi, o: Operation): Promise<unknown> {
  const at = { group: o.res.group, version: o.res.version, plural: o.res.plural };
  const opts = requestOptions(o.query, o.contentType, o.subresource === 'eviction' ? `/${encodeURIComponent(o.name ?? '')}/eviction` : '', o.impersonateUser);
  const ns = o.namespace;
  const name = o.name ?? '';
  const body = o.body as object;
  const sub = o.subresource;
  switch (o.verb) {
    case 'get':
      if (ns === undefined) {
        const p = { ...at, name };
        return sub === 'status' ? api.getClusterCustomObjectStatus(p, opts) : sub === 'scale' ? api.getClusterCustomObjectScale(p, opts) : api.getClusterCustomObject(p, opts);
      } else {
        const p = { ...at, namespace: ns, name };
        return sub === 'status' ? api.getNamespacedCustomObjectStatus(p, opts) : sub === 'scale' ? api.getNamespacedCustomObjectScale(p, opts) : api.getNamespacedCustomObject(p, opts);
      }
    case 'list':
      return ns === undefined ? api.listClusterCustomObject(at, opts) : api.listNamespacedCustomObject({ ...at, namespace: ns }, opts);
    case 'create':
      return ns === undefined ? api.createClusterCustomObject({ ...at, body }, opts) : api.createNamespacedCustomObject({ ...at, namespace: ns, body }, opts);
    case 'update':
      if (ns === undefined) {
        const p = { ...at, name, body };
        return sub === 'status' ? api.replaceClusterCustomObjectStatus(p, opts) : sub === 'scale' ? api.replaceClusterCustomObjectScale(p, opts) : api.replaceClusterCustomObject(p, opts);
      } else {
        const p = { ...at, namespace: ns, name, body };
        return sub === 'status' ? api.replaceNamespacedCustomObjectStatus(p, opts) : sub === 'scale' ? api.replaceNamespacedCustomObjectScale(p, opts) : api.replaceNamespacedCustomObject(p, opts);
      }
    case 'patch':
      if (ns === undefined) {
        const p = { ...at, name, body };
        return sub === 'status' ? api.patchClusterCustomObjectStatus(p, opts) : sub === 'scale' ? api.patchClusterCustomObjectScale(p, opts) : api.patchClusterCustomObject(p, opts);
      } else {
        const p = { ...at, namespace: ns, name, body };
        return sub === 'status' ? api.patchNamespacedCustomObjectStatus(p, opts) : sub === 'scale' ? api.patchNamespacedCustomObjectScale(p, opts) : api.patchNamespacedCustomObject(p, opts);
      }
    case 'delete': {
      const withBody = o.body !== undefined ? { body } : {};
      return ns === undefined ? api.deleteClusterCustomObject({ ...at, name, ...withBody }, opts) : api.deleteNamespacedCustomObject({ ...at, namespace: ns, name, ...withBody }, opts);
    }
  }
}

/** The client-node implementation of {@link KubeClient}. */
export function createKubeClient(kubeConfig: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  // Kept connections: makeApiClient opens one per request (connections.ts).
  const api = pooledApiClient(kubeConfig, CustomObjectsApi);
  return genericKubeClient({ send: (o) => dispatch(api, o) }, options);
}
