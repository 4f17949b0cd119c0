/**
 * Requests for the subresources with their own semantics: `/scale`, `pods/eviction` and
 * `pods/log` (the sandbox runs no containers, so logs are a clear, immediate error instead of a
 * hang). `/status`, `pods/binding` and `namespaces/finalize` stay with the main handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Core, Scope } from './core.ts';
import { badRequest, methodNotAllowed, notFound } from './errors.ts';
import { evictPod, type EvictionHooks } from './eviction.ts';
import { readBody, send } from './http-io.ts';
import { negotiate } from './negotiation.ts';
import type { Route } from './routing.ts';
import { getScale, patchScale, updateScale } from './scale.ts';
import { isObject } from './types.ts';

/** Serves the request when it is for one of these subresources; false otherwise. */
export async function serveSubresource(core: Core, hooks: EvictionHooks, route: Route, verb: string, scope: Scope, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const name = route.name!;
  switch (route.subresource) {
    case 'scale': {
      negotiate(req.headers.accept);
      if (verb === 'get') send(res, 200, getScale(core, scope, name));
      else if (verb === 'update') send(res, 200, updateScale(core, scope, name, (await readBody(req)).value));
      else if (verb === 'patch') send(res, 200, patchScale(core, scope, name, req.headers['content-type'] ?? '', (await readBody(req)).value));
      else throw methodNotAllowed();
      return true;
    }
    case 'eviction': {
      if (verb !== 'create') throw methodNotAllowed();
      negotiate(req.headers.accept);
      send(res, 201, evictPod(core, hooks, scope, name, (await readBody(req)).value));
      return true;
    }
    case 'log': {
      if (verb !== 'get') throw methodNotAllowed();
      const pod = core.store.peek(scope.res, scope.namespace, name);
      if (!pod) throw notFound(scope.res, name);
      const spec = isObject(pod.spec) ? pod.spec : {};
      const node = typeof spec.nodeName === 'string' ? spec.nodeName : '';
      throw badRequest(node ? `pod "${name}" runs on simulated node "${node}": the sandbox cluster runs no containers, so there are no logs to show` : `pod "${name}" is not scheduled to a node yet: the sandbox cluster runs no containers, so there are no logs to show`);
    }
    default:
      return false;
  }
}
