/**
 * The plumbing every storage agent shares: a key worker whose handler counts a 404 as done
 * (the object went away while we worked on it), and an informer over a cluster-wide custom (or
 * non-core) resource listed through CustomObjectsApi.
 */
import { isNotFound, type NodeSideApi } from '../nodes/api.ts';
import { KeyWorker, type KeyHandler } from '../nodes/key-worker.ts';
import { WatchedCache, type CacheEvent, type RawList } from '../nodes/watched-cache.ts';
import type { KubeObject } from '../nodes/objects.ts';

type OnError = ((what: string, err: unknown) => void) | undefined;

export function agentWorker(name: string, handle: KeyHandler, concurrency: number, onError: OnError): KeyWorker {
  return new KeyWorker(
    async (key) => {
      try {
        await handle(key);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    { concurrency, onError: (k, e) => onError?.(`${name} ${k}`, e) },
  );
}

export function clusterCache<T extends KubeObject>(
  api: NodeSideApi,
  coords: { group: string; version: string; plural: string },
  who: string,
  onEvent: (event: CacheEvent, obj: T) => void,
  onError: OnError,
): WatchedCache<T> {
  return new WatchedCache<T>({
    kc: api.kc,
    path: `/apis/${coords.group}/${coords.version}/${coords.plural}`,
    list: async () => (await api.custom.listClusterCustomObject(coords)) as RawList<T>,
    onError: (e) => onError?.(`${who} ${coords.plural} informer`, e),
    onEvent,
  });
}

/** An informer over all PVCs. */
export function pvcCache<T extends KubeObject>(api: NodeSideApi, who: string, onEvent: (event: CacheEvent, obj: T) => void, onError: OnError): WatchedCache<T> {
  return new WatchedCache<T>({
    kc: api.kc,
    path: '/api/v1/persistentvolumeclaims',
    list: async () => JSON.parse(JSON.stringify(await api.core.listPersistentVolumeClaimForAllNamespaces({}))) as RawList<T>,
    onError: (e) => onError?.(`${who} pvc informer`, e),
    onEvent,
  });
}
