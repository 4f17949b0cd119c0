/**
 * The resources the relay lists and watches: the union of every controller's watches
 * (functions/registry.ts), each listed page by page through the generic Kubernetes client, so a
 * new controller's resource needs no relay code.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { resourceName } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { resourcePath } from '../../shared/kube/requests.ts';
import type { ListPage, ResourceWatch } from './reflector.ts';
import type { RelayRoute, WatchedObject, WatchSpec } from '../../shared/relay/route.ts';

/** Every watch of `routes`, once each (by resource and selector); a resource watched with two selectors is watched unfiltered. */
export function unionOfWatches(routes: readonly RelayRoute[]): WatchSpec[] {
  const byResource = new Map<string, WatchSpec>();
  for (const w of routes.flatMap((r) => r.watches)) {
    const name = resourceName(w.res);
    const seen = byResource.get(name);
    if (!seen) byResource.set(name, w);
    else if (seen.labelSelector !== w.labelSelector) byResource.set(name, { res: w.res });
  }
  return [...byResource.values()];
}

/** The list + watch of each watched resource, across all namespaces. */
export function watchedResources(kc: KubeConfig, routes: readonly RelayRoute[]): ResourceWatch[] {
  const kube = createKubeClient(kc);
  return unionOfWatches(routes).map(
    (w): ResourceWatch => ({
      kind: w.res.kind,
      path: resourcePath(w.res),
      ...(w.labelSelector ? { labelSelector: w.labelSelector } : {}),
      list: async (limit, cont): Promise<ListPage> => {
        const page = await kube.list(w.res, undefined, { labelSelector: w.labelSelector, limit, continue: cont });
        return { items: page.items as WatchedObject[], resourceVersion: page.resourceVersion ?? '', continueToken: page.continueToken };
      },
    }),
  );
}
