/**
 * What the launcher pod's automatic resource limits depend on (reference §b.6): a ResourceQuota
 * in the VMI's namespace that limits memory or CPU, the namespace's memory-limit ratio label, and
 * whether the cluster's `autoCPULimitNamespaceLabelSelector` matches the namespace. KubeVirt
 * reads them from its informers when it renders; we read them when about to create the pod.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NAMESPACES, RESOURCE_QUOTAS } from '../../shared/api/resources.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { namespaceInfo, namespaceLabelsMatter } from '../../shared/template/cluster-facts.ts';
import type { NamespaceInfo } from '../../shared/template/render-resources.ts';

/** One LIST of the namespace's quotas; the namespace itself only when its labels matter (shared/template/cluster-facts.ts). */
export async function namespaceLimits(kube: Pick<KubeClient, 'get' | 'list'>, vmi: VirtualMachineInstance, config: ClusterConfig): Promise<NamespaceInfo> {
  const namespace = vmi.metadata?.namespace ?? '';
  const quotas = (await kube.list(RESOURCE_QUOTAS, namespace)).items;
  // A namespace that is gone (the VMI is on its way out) has no labels: KubeVirt's lookup fails the same way.
  const labels = namespaceLabelsMatter(vmi, config, quotas) ? ((await kube.get(NAMESPACES, undefined, namespace))?.metadata?.labels ?? {}) : undefined;
  return namespaceInfo(vmi, config, quotas, labels);
}
