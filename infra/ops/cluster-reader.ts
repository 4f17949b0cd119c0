/**
 * The cluster as `trace` and `diagnose` see it: the generic client (shared/kube/client.ts) cut
 * down to `get` and `list`, so these commands cannot write even by mistake. Objects come back as
 * the client gives them; a missing object is `undefined`.
 */
import type { KubeConfig, V1StorageClass } from '@kubernetes/client-node';
import { defineResource } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';

/** Reads only. */
export type ClusterReader = Pick<KubeClient, 'get' | 'list'>;

/**
 * `storage.k8s.io/v1` StorageClass: only the operations commands read it (a claim's binding
 * mode), so it is described here rather than among the reconciler's resources.
 */
export const STORAGE_CLASSES = defineResource<V1StorageClass>({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', kind: 'StorageClass', namespaced: false });

/** A read-only view of `kube`. */
export function readOnly(kube: KubeClient): ClusterReader {
  return { get: (res, ns, name, o) => kube.get(res, ns, name, o), list: (res, ns, o) => kube.list(res, ns, o) };
}

/** A {@link ClusterReader} over a kubeconfig. */
export function clusterReader(kc: KubeConfig): ClusterReader {
  return readOnly(createKubeClient(kc, { reportingInstance: 'virt-reconciler-ops' }));
}
