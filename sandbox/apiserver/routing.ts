/**
 * Request routing: splits a resource URL into group/version/resource, namespace, name and
 * subresource, and names the verb the way RBAC and the counters do.
 */
import { ApiError } from './errors.ts';
import type { ResourceInfo, ResourceRegistry } from './resources.ts';

/** A parsed resource request. */
export interface Route {
  res: ResourceInfo;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** 404 for paths the server does not serve (the real server's body for unknown resources). */
export function unknownPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', { causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }] });
}

/** Parses `/api/v1/...` or `/apis/{g}/{v}/...`; undefined when it is not a resource path. */
export function parseRoute(registry: ResourceRegistry, path: string): Route | undefined {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  // `/namespaces/{ns}/{resource}…` unless it is the namespaces resource itself (`/namespaces/{n}/finalize`).
  if (rest[0] === 'namespaces' && rest.length >= 3 && registry.byPath(group, version, rest[2]!)?.namespaced) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length > 3) throw unknownPath();
  const res = registry.byPath(group, version, rest[0]!);
  if (!res) throw unknownPath();
  if (namespace !== undefined && !res.namespaced) throw unknownPath();
  const sub = rest[2];
  if (sub !== undefined && !(sub === 'status' && res.status) && !(sub === 'scale' && res.scale) && !(res.subresources ?? []).includes(sub)) throw unknownPath();
  return { res, namespace, name: rest[1], subresource: sub };
}

/** The Kubernetes verb of a request. */
export function verbOf(method: string, route: Route, watch: boolean): string {
  switch (method) {
    case 'GET':
      return route.name ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return route.name ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
