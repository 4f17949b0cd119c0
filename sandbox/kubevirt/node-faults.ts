/**
 * Node-level fault injection through the API only (so it works on both clusters): a node that
 * goes away for good, as when a cloud provider deletes the machine and the pod garbage collector
 * force-deletes what was bound to it.
 */
import { isNotFound, plain, type NodeSideApi } from '../nodes/api.ts';
import type { Pod } from '../nodes/objects.ts';

/** Deletes `nodeName` and force-deletes (grace 0) every pod bound to it; returns the pods' keys. */
export async function deleteNodeWithPods(api: NodeSideApi, nodeName: string): Promise<string[]> {
  // Node first: nothing may be scheduled onto it while its pods go.
  try {
    await api.core.deleteNode({ name: nodeName });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const pods = plain<{ items: Pod[] }>(await api.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })).items;
  const deleted: string[] = [];
  for (const pod of pods) {
    const { namespace = '', name = '' } = pod.metadata ?? {};
    try {
      await api.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
      deleted.push(`${namespace}/${name}`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return deleted;
}
