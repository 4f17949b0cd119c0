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
import { selectorMatches } from '../../shared/predicates/label-selector.ts';
import type { NamespaceInfo } from '../../shared/template/render-resources.ts';

/**
 * One LIST of the namespace's quotas; the namespace itself only when its labels matter (a quota
 * limits memory: the ratio label; the cluster has a CPU-limit selector and the VMI no CPU limit).
 */
export async function namespaceLimits(kube: Pick<KubeClient, 'get' | 'list'>, vmi: VirtualMachineInstance, config: ClusterConfig): Promise<NamespaceInfo> {
  const namespace = vmi.metadata?.namespace ?? '';
  const limits = vmi.spec.domain.resources?.limits ?? {};
  const quotas = (await kube.list(RESOURCE_QUOTAS, namespace)).items;
  const quotaLimits = (r: string) => quotas.some((q) => q.spec?.hard?.[`limits.${r}`] !== undefined);
  const quotaLimitsMemory = limits['memory'] === undefined && quotaLimits('memory');
  let quotaLimitsCpu = limits['cpu'] === undefined && quotaLimits('cpu');
  const bySelector = !quotaLimitsCpu && limits['cpu'] === undefined && config.autoCpuLimitNamespaceSelector !== undefined;
  if (!quotaLimitsMemory && !bySelector) return { quotaLimitsMemory, quotaLimitsCpu };
  // A namespace that is gone (the VMI is on its way out) has no labels: KubeVirt's lookup fails the same way.
  const labels = (await kube.get(NAMESPACES, undefined, namespace))?.metadata?.labels ?? {};
  if (bySelector) quotaLimitsCpu = selectorMatches(config.autoCpuLimitNamespaceSelector, labels);
  return { labels, quotaLimitsMemory, quotaLimitsCpu };
}
