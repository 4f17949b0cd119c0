/**
 * The cluster config (from the KubeVirt CR), cached for a few seconds: safe to lose, cheap to
 * re-read, and never read once per reconcile. Keeps the last good config when a read fails.
 *
 * `{ fresh: true }` reads the CR now (and refreshes the cache): for the rare write that must not
 * act on a config a few seconds old — a migration target pod rendered right after an upgrade
 * would otherwise get the old launcher image while the workload updater, whose own cache has
 * caught up, migrates the VMI precisely to leave it.
 */
import type { KubeClient } from '../kube/client.ts';
import { clusterConfigFromKubeVirt, syncOverridesFromEnv, type ClusterConfig } from './cluster-config.ts';
import { KUBEVIRTS } from '../api/resources.ts';

/** How a caller asks for the config; see {@link cachedClusterConfig}. */
export interface ClusterConfigRead {
  readonly fresh?: boolean;
}

/** `flags` win over the CR (virt-controller's `--launcher-image` flag), as do the deployment's sync lists. */
export function cachedClusterConfig(kube: Pick<KubeClient, 'list'>, ttlMs = 5000, now: () => number = Date.now, flags: { launcherImage?: string } = {}): (read?: ClusterConfigRead) => Promise<ClusterConfig> {
  // The deployment's label/annotation sync lists (virt-controller's flags), read once.
  const overrides = { ...syncOverridesFromEnv(), ...flags };
  let value: ClusterConfig | undefined;
  let readAt = 0;
  let inflight: Promise<ClusterConfig> | undefined;
  return async (read = {}) => {
    if (value && !read.fresh && now() - readAt < ttlMs) return value;
    // A fresh read may not share a read that started before it was asked for.
    if (read.fresh && inflight) await inflight;
    inflight ??= (async () => {
      try {
        const list = await kube.list(KUBEVIRTS, undefined);
        value = clusterConfigFromKubeVirt(list.items[0], overrides);
        readAt = now();
      } catch (err) {
        // Keep using the last good config; with none yet, the defaults are what KubeVirt uses.
        value ??= clusterConfigFromKubeVirt(undefined, overrides);
        if (!value) throw err;
      } finally {
        inflight = undefined;
      }
      return value;
    })();
    return inflight;
  };
}
