/**
 * Where migration policies and namespace labels come from: two cluster reads through the
 * `KubeClient` facade (`listMigrationPolicies`, `getNamespace`), cached for a few seconds (like
 * the cluster config) — a policy only matters at hand-off, so a few seconds of staleness is
 * harmless. Read failures keep the last good answer (none → no policy), never failing a reconcile.
 *
 * Only the facade is used, never `@kubernetes/client-node`: the Lambda bundle imports this file
 * (controller.ts), and any client-node value import puts all of it back (docs/kube-client.md).
 */
import type { MigrationPolicy } from '../../shared/api/index.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { PolicySource } from './deps.ts';
import { MIGRATION_POLICIES, NAMESPACES } from '../../shared/api/resources.ts';

/** No policies, no namespace labels: the cluster's `migrations` config applies as is. */
export const NO_POLICIES: PolicySource = { policies: async () => [], namespaceLabels: async () => ({}) };

/** The reads a policy source makes. */
export type PolicyKube = Pick<KubeClient, 'list' | 'get'>;

/** Default cache lifetime (ms). */
export const POLICY_CACHE_TTL_MS = 5000;

/** `read()` at most once per `ttlMs`; a failed read keeps the last good value (or `fallback`). */
function cached<T>(ttlMs: number, now: () => number, read: () => Promise<T>, fallback: T): () => Promise<T> {
  let value: T | undefined;
  let at = -Infinity;
  return async () => {
    if (value !== undefined && now() - at < ttlMs) return value;
    try {
      value = await read();
      at = now();
    } catch {
      // Not cached as fresh: the next call asks again.
      value ??= fallback;
    }
    return value;
  };
}

/**
 * A {@link PolicySource} over `kube`, each answer cached for `ttlMs` on `now` (wall clock by
 * default). Build it once per process (cold start) with the shared client, so that the cache
 * outlives single reconciles; its reads are therefore not in a reconcile's API call counter.
 */
export function cachedPolicySource(kube: PolicyKube, ttlMs = POLICY_CACHE_TTL_MS, now: () => number = Date.now): PolicySource {
  const policies = cached<readonly MigrationPolicy[]>(ttlMs, now, async () => (await kube.list(MIGRATION_POLICIES, undefined)).items, []);
  const namespaces = new Map<string, () => Promise<Readonly<Record<string, string>>>>();
  return {
    policies,
    namespaceLabels(namespace) {
      let read = namespaces.get(namespace);
      if (!read) {
        // A missing namespace has no labels (its VMIs are going away anyway).
        read = cached(ttlMs, now, async () => (await kube.get(NAMESPACES, undefined, namespace))?.metadata?.labels ?? {}, {});
        namespaces.set(namespace, read);
      }
      return read();
    },
  };
}
