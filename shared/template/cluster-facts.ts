/**
 * The cluster facts the template service reads besides the VMI and the KubeVirt CR (KubeVirt
 * keeps them in its informers' caches): each claim's volume mode, access modes and UID, and the
 * namespace's ResourceQuotas and labels. Pure: the VMI controller passes what it read, the CLI
 * what `--objects` holds.
 */
import type { V1Namespace, V1PersistentVolumeClaim, V1ResourceQuota } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../api/index.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { selectorMatches } from '../predicates/label-selector.ts';
import { InvalidInputError } from '../errors.ts';
import { backendPvcFor } from '../storage/backend-storage.ts';
import type { RenderOptions } from './render-launcher-pod.ts';
import type { NamespaceInfo } from './render-resources.ts';
import type { PvcInfo } from './render-volumes.ts';

/** What the renderer needs of a claim: its volume mode and access modes (from the spec, as KubeVirt reads them), its UID. */
export function pvcInfo(pvc: V1PersistentVolumeClaim): PvcInfo {
  const mode = pvc.spec?.volumeMode;
  const uid = pvc.metadata?.uid;
  return { ...(mode === 'Block' || mode === 'Filesystem' ? { volumeMode: mode } : {}), accessModes: [...(pvc.spec?.accessModes ?? [])], ...(uid ? { uid } : {}) };
}

/** Does the namespace's label set matter for this VMI (so that a caller reads the namespace only then)? */
export function namespaceLabelsMatter(vmi: VirtualMachineInstance, config: ClusterConfig, quotas: readonly V1ResourceQuota[]): boolean {
  const limits = vmi.spec.domain.resources?.limits ?? {};
  const quotaLimits = (r: string) => quotas.some((q) => q.spec?.hard?.[`limits.${r}`] !== undefined);
  const memory = limits['memory'] === undefined && quotaLimits('memory');
  const cpuBySelector = limits['cpu'] === undefined && !quotaLimits('cpu') && config.autoCpuLimitNamespaceSelector !== undefined;
  return memory || cpuBySelector;
}

/**
 * Automatic limits (reference §b.6): a quota of the namespace with `limits.memory` / `limits.cpu`
 * asks for them unless the VMI sets its own; the cluster's `autoCPULimitNamespaceLabelSelector`
 * matching the namespace's labels asks for a CPU limit too. `labels` undefined: the namespace was
 * not read (or is gone), as a namespace missing from KubeVirt's cache.
 */
export function namespaceInfo(vmi: VirtualMachineInstance, config: ClusterConfig, quotas: readonly V1ResourceQuota[], labels: Readonly<Record<string, string>> | undefined): NamespaceInfo {
  const limits = vmi.spec.domain.resources?.limits ?? {};
  const quotaLimits = (r: string) => quotas.some((q) => q.spec?.hard?.[`limits.${r}`] !== undefined);
  const quotaLimitsMemory = limits['memory'] === undefined && quotaLimits('memory');
  const quotaLimitsCpu = limits['cpu'] === undefined && (quotaLimits('cpu') || (labels !== undefined && selectorMatches(config.autoCpuLimitNamespaceSelector, labels)));
  return { ...(labels ? { labels: { ...labels } } : {}), quotaLimitsMemory, quotaLimitsCpu };
}

/** KubeVirt's Multus annotation naming the device-plugin resource a network's pods need. */
export const NAD_RESOURCE_NAME_ANNOTATION = 'k8s.v1.cni.cncf.io/resourceName';

/** The NetworkAttachmentDefinition of each Multus network: `ns/name`, or a name in the VMI's namespace. */
export function multusNads(vmi: VirtualMachineInstance): { network: string; namespace: string; name: string }[] {
  const own = vmi.metadata?.namespace ?? '';
  return (vmi.spec.networks ?? []).flatMap((n) => {
    const full = n.multus?.networkName;
    if (full === undefined) return [];
    const at = full.indexOf('/');
    return [{ network: n.name, namespace: at >= 0 ? full.slice(0, at) : own, name: at >= 0 ? full.slice(at + 1) : full }];
  });
}

/** What is read of a NetworkAttachmentDefinition: its annotations. */
export type Nad = { metadata?: { annotations?: Record<string, string> } };

/**
 * KubeVirt's `NetworkToResource`, with `ExternalNetResourceInjection` off (it is on by default):
 * each Multus network's resource from its NetworkAttachmentDefinition, as `find` gives it
 * (undefined: not there). A missing one refuses the render with KubeVirt's words. With the gate on,
 * nothing is looked up and nothing injected (the network's own webhook does it).
 */
export function networkResourcesFrom(vmi: VirtualMachineInstance, config: ClusterConfig, find: (namespace: string, name: string) => Nad | undefined): { resources: Record<string, string> } | { missing: string } {
  if (config.featureGates.has('ExternalNetResourceInjection')) return { resources: {} };
  const resources: Record<string, string> = {};
  for (const ref of multusNads(vmi)) {
    const nad = find(ref.namespace, ref.name);
    if (!nad) return { missing: `failed to locate network attachment definition ${ref.namespace}/${ref.name}` };
    resources[ref.network] = nad.metadata?.annotations?.[NAD_RESOURCE_NAME_ANNOTATION] ?? '';
  }
  return { resources };
}

/** Any object of a YAML stream (`kind`, `metadata`): what `renderFactsFromObjects` picks from. */
export interface ClusterObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

/**
 * The render options a set of cluster objects gives for `vmi` (the CLI's `--objects`): its
 * namespace's PVCs (a DataVolume counts as the PVC it becomes), the backend-storage claim among
 * them, its namespace's quotas and labels, the Multus networks' NetworkAttachmentDefinitions (a
 * missing one is KubeVirt's render error, an InvalidInputError). Objects without a namespace
 * count as the VMI's.
 */
export function renderFactsFromObjects(objects: readonly ClusterObject[], vmi: VirtualMachineInstance, config: ClusterConfig): RenderOptions {
  const ns = vmi.metadata?.namespace ?? 'default';
  const inNs = (o: ClusterObject) => (o.metadata?.namespace ?? ns) === ns;
  const pvcs = objects.filter((o) => o.kind === 'PersistentVolumeClaim' && inNs(o)) as V1PersistentVolumeClaim[];
  const quotas = objects.filter((o) => o.kind === 'ResourceQuota' && inNs(o)) as V1ResourceQuota[];
  const namespace = objects.find((o) => o.kind === 'Namespace' && o.metadata?.name === ns) as V1Namespace | undefined;
  const backend = backendPvcFor(vmi.metadata?.name ?? '', pvcs)?.metadata?.name;
  const nads = objects.filter((o) => o.kind === 'NetworkAttachmentDefinition');
  const networks = networkResourcesFrom(vmi, config, (namespace, name) => nads.find((o) => o.metadata?.name === name && (o.metadata?.namespace ?? ns) === namespace) as Nad | undefined);
  if ('missing' in networks) throw new InvalidInputError('spec.networks', networks.missing);
  return {
    pvcs: Object.fromEntries(pvcs.map((p) => [p.metadata?.name ?? '', pvcInfo(p)])),
    namespace: namespaceInfo(vmi, config, quotas, namespace?.metadata?.labels ?? {}),
    ...(backend ? { backendPvc: backend } : {}),
    ...(Object.keys(networks.resources).length > 0 ? { networkResources: networks.resources } : {}),
  };
}
