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

/** Any object of a YAML stream (`kind`, `metadata`): what `renderFactsFromObjects` picks from. */
export interface ClusterObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

/**
 * The render options a set of cluster objects gives for `vmi` (the CLI's `--objects`): its
 * namespace's PVCs (a DataVolume counts as the PVC it becomes), the backend-storage claim among
 * them, its namespace's quotas and labels. Objects without a namespace count as the VMI's.
 */
export function renderFactsFromObjects(objects: readonly ClusterObject[], vmi: VirtualMachineInstance, config: ClusterConfig): RenderOptions {
  const ns = vmi.metadata?.namespace ?? 'default';
  const inNs = (o: ClusterObject) => (o.metadata?.namespace ?? ns) === ns;
  const pvcs = objects.filter((o) => o.kind === 'PersistentVolumeClaim' && inNs(o)) as V1PersistentVolumeClaim[];
  const quotas = objects.filter((o) => o.kind === 'ResourceQuota' && inNs(o)) as V1ResourceQuota[];
  const namespace = objects.find((o) => o.kind === 'Namespace' && o.metadata?.name === ns) as V1Namespace | undefined;
  const backend = backendPvcFor(vmi.metadata?.name ?? '', pvcs)?.metadata?.name;
  return {
    pvcs: Object.fromEntries(pvcs.map((p) => [p.metadata?.name ?? '', pvcInfo(p)])),
    namespace: namespaceInfo(vmi, config, quotas, namespace?.metadata?.labels ?? {}),
    ...(backend ? { backendPvc: backend } : {}),
  };
}
