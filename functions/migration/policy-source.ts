/**
 * Where migration policies and namespace labels come from: two cluster reads the `KubeClient`
 * facade does not offer, made directly over client-node and cached for a few seconds (like the
 * cluster config) — a policy only matters at hand-off, so a few seconds of staleness is harmless.
 * Read failures keep the last good answer (none → no policy), never failing a reconcile.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { MigrationPolicy } from '../../shared/api/index.ts';
import { MIGRATION_POLICIES } from '../../shared/api/resources.ts';
import type { PolicySource } from './deps.ts';

/** No policies, no namespace labels: the cluster's `migrations` config applies as is. */
export const NO_POLICIES: PolicySource = { policies: async () => [], namespaceLabels: async () => ({}) };

function cached<T>(ttlMs: number, now: () => number, read: () => Promise<T>, fallback: T): () => Promise<T> {
  let value: T | undefined;
  let at = -Infinity;
  return async () => {
    if (value !== undefined && now() - at < ttlMs) return value;
    try {
      value = await read();
      at = now();
    } catch {
      value ??= fallback;
    }
    return value;
  };
}

/** A {@link PolicySource} over a kubeconfig, cached for `ttlMs` (wall clock). */
export function cachedPolicySource(kc: KubeConfig, ttlMs = 5000, now: () => number = Date.now): PolicySource {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const policies = cached<readonly MigrationPolicy[]>(ttlMs, now, async () => {
    const list = (await custom.listClusterCustomObject({ group: MIGRATION_POLICIES.group, version: MIGRATION_POLICIES.version, plural: MIGRATION_POLICIES.plural })) as { items?: MigrationPolicy[] };
    return list.items ?? [];
  }, []);
  const namespaces = new Map<string, () => Promise<Readonly<Record<string, string>>>>();
  return {
    policies,
    namespaceLabels(namespace) {
      let read = namespaces.get(namespace);
      if (!read) {
        read = cached(ttlMs, now, async () => (await core.readNamespace({ name: namespace })).metadata?.labels ?? {}, {});
        namespaces.set(namespace, read);
      }
      return read();
    },
  };
}
