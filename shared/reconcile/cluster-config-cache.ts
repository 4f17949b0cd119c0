/**
 * The cluster config (from the KubeVirt CR), cached for a few seconds: safe to lose, cheap to
 * re-read, and never read once per reconcile. Keeps the last good config when a read fails.
 */
import type { KubeClient } from '../kube/client.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../template/cluster-config.ts';
import { KUBEVIRTS } from '../api/resources.ts';

export function cachedClusterConfig(kube: Pick<KubeClient, 'list'>, ttlMs = 5000, now: () => number = Date.now): () => Promise<ClusterConfig> {
  let value: ClusterConfig | undefined;
  let readAt = 0;
  let inflight: Promise<ClusterConfig> | undefined;
  return async () => {
    if (value && now() - readAt < ttlMs) return value;
    inflight ??= (async () => {
      try {
        const list = await kube.list(KUBEVIRTS, undefined);
        value = clusterConfigFromKubeVirt(list.items[0]);
        readAt = now();
      } catch (err) {
        // Keep using the last good config; with none yet, the defaults are what KubeVirt uses.
        value ??= clusterConfigFromKubeVirt(undefined);
        if (!value) throw err;
      } finally {
        inflight = undefined;
      }
      return value;
    })();
    return inflight;
  };
}
