/**
 * The cluster as `trace` and `diagnose` see it: the generic client (shared/kube/client.ts) cut
 * down to `get` and `list`, so these commands cannot write even by mistake. Objects come back as
 * the client gives them; a missing object is `undefined`.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../shared/kube/client-node.ts';
import type { KubeClient } from '../shared/kube/client.ts';

/** Reads only. */
export type ClusterReader = Pick<KubeClient, 'get' | 'list'>;

export { STORAGE_CLASSES } from '../shared/api/resources.ts';

/** A read-only view of `kube`. */
export function readOnly(kube: KubeClient): ClusterReader {
  return { get: (res, ns, name, o) => kube.get(res, ns, name, o), list: (res, ns, o) => kube.list(res, ns, o) };
}

/** A {@link ClusterReader} over a kubeconfig. */
export function clusterReader(kc: KubeConfig): ClusterReader {
  return readOnly(createKubeClient(kc, { reportingInstance: 'virt-reconciler-ops' }));
}
