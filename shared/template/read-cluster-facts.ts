/**
 * The cluster reads the VMI and migration controllers make just before they render a launcher
 * (or migration target) pod: KubeVirt's template service looks these up in its informers' caches
 * at render time; a stateless pass reads them when it is about to create the pod. What they mean
 * for the render is decided in cluster-facts.ts (pure).
 */
import type { VirtualMachineInstance } from '../api/index.ts';
import { CONFIG_MAPS, NAMESPACES, NETWORK_ATTACHMENT_DEFINITIONS, RESOURCE_QUOTAS } from '../api/resources.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import type { KubeClient } from '../kube/client.ts';
import { multusNads, namespaceInfo, namespaceLabelsMatter, networkResourcesFrom, type Nad } from './cluster-facts.ts';
import type { NamespaceInfo } from './render-resources.ts';
import { requestedSidecars } from './sidecars.ts';

/**
 * What the pod's automatic resource limits depend on (reference §b.6): one LIST of the
 * namespace's ResourceQuotas (one limiting memory or CPU asks for limits) — at `resourceVersion`
 * 0, as fresh as the API server's watch cache, which is what KubeVirt's informer gives its
 * template service (and what a message's view may answer: the VMI controller's carries the
 * quotas while the VMI is unscheduled) —, and the namespace
 * itself only when its labels matter (the memory-limit ratio label, the cluster's
 * `autoCPULimitNamespaceLabelSelector`).
 */
export async function namespaceLimits(kube: Pick<KubeClient, 'get' | 'list'>, vmi: VirtualMachineInstance, config: ClusterConfig): Promise<NamespaceInfo> {
  const namespace = vmi.metadata?.namespace ?? '';
  const quotas = (await kube.list(RESOURCE_QUOTAS, namespace, { resourceVersion: '0' })).items;
  // A namespace that is gone (the VMI is on its way out) has no labels: KubeVirt's lookup fails the same way.
  const labels = namespaceLabelsMatter(vmi, config, quotas) ? ((await kube.get(NAMESPACES, undefined, namespace))?.metadata?.labels ?? {}) : undefined;
  return namespaceInfo(vmi, config, quotas, labels);
}

/**
 * A hook sidecar that runs a script from a ConfigMap: KubeVirt reads the ConfigMap when it
 * renders and refuses to render while it is missing (the pod would wait for ever for a volume
 * that is not there). Answers KubeVirt's render error for the first missing one, or undefined.
 */
export async function missingSidecarConfigMap(kube: Pick<KubeClient, 'get'>, vmi: VirtualMachineInstance, config: ClusterConfig): Promise<string | undefined> {
  const namespace = vmi.metadata?.namespace ?? '';
  for (const s of requestedSidecars(vmi, config)) {
    if (!s.configMap) continue;
    if (!(await kube.get(CONFIG_MAPS, namespace, s.configMap.name))) return `configmaps "${s.configMap.name}" not found`;
  }
  return undefined;
}

/**
 * The Multus networks' device-plugin resources (`ExternalNetResourceInjection` off): one GET of
 * each network's NetworkAttachmentDefinition, as KubeVirt's template service makes at every render
 * (it keeps no NAD cache). `missing`: KubeVirt's render error for the first one not there.
 */
export async function networkResources(kube: Pick<KubeClient, 'get'>, vmi: VirtualMachineInstance, config: ClusterConfig): Promise<{ resources: Record<string, string> } | { missing: string }> {
  const read = new Map<string, Nad | undefined>();
  if (!config.featureGates.has('ExternalNetResourceInjection')) {
    for (const ref of multusNads(vmi)) {
      const id = `${ref.namespace}/${ref.name}`;
      if (!read.has(id)) read.set(id, await kube.get(NETWORK_ATTACHMENT_DEFINITIONS, ref.namespace, ref.name));
      if (read.get(id) === undefined) break; // the first missing one is the answer
    }
  }
  return networkResourcesFrom(vmi, config, (namespace, name) => read.get(`${namespace}/${name}`));
}
