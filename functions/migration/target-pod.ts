/**
 * The migration's pods: which of the VMI's pods is this migration's target and which is the
 * source (reference §d.2 step 4), and the target pod as the template service renders it
 * (reference §b.8: the launcher pod with images pinned to the source pod's digests, required
 * anti-affinity to the VMI's other pods — hence to the source node — the migration's added node
 * selector, the `kubevirt.io/migrationJobUID` label and `kubevirt.io/migrationJobName` annotation,
 * host-model CPU and CPU vendor selectors from the source node's labels, and the SELinux level).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import {
  APP_LABEL,
  CPU_FEATURE_NODE_LABEL_PREFIX,
  CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX,
  HOST_MODEL_CPU_NODE_LABEL_PREFIX,
  HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX,
  LAUNCHER_APP,
  MIGRATION_JOB_UID_LABEL,
} from '../../shared/api/well-known.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import { renderTargetPod } from '../../shared/template/render-target-pod.ts';
import { renderVolumesImageNames, type PvcInfo } from '../../shared/template/render-volumes.ts';
import type { NamespaceInfo } from '../../shared/template/render-resources.ts';
import { currentVmiPod, isPodFinal } from '../../shared/predicates/pods.ts';

/** This migration's target pods (normally one): launcher pods labelled with its UID. */
export function targetPodsOf(pods: readonly V1Pod[], migration: VirtualMachineInstanceMigration): V1Pod[] {
  const uid = migration.metadata?.uid;
  return pods.filter((p) => p.metadata?.labels?.[APP_LABEL] === LAUNCHER_APP && uid !== undefined && p.metadata.labels[MIGRATION_JOB_UID_LABEL] === uid);
}

/** The pod the VMI runs in now (KubeVirt's CurrentVMIPod), never one of this migration's targets. */
export function sourcePodOf(vmi: VirtualMachineInstance, pods: readonly V1Pod[], migration: VirtualMachineInstanceMigration): V1Pod | undefined {
  const targets = new Set(targetPodsOf(pods, migration));
  return currentVmiPod(vmi, pods.filter((p) => !targets.has(p)));
}

/** VMI pods that are not final: KubeVirt waits while more than one exists (a previous target still going). */
export function liveVmiPods(pods: readonly V1Pod[]): V1Pod[] {
  return pods.filter((p) => !isPodFinal(p));
}

/**
 * Digests a source pod already runs from: a pod that was itself a migration target mounts its
 * images as image volumes pinned to `…@sha256:…`, and has no container status to take a digest
 * from (the template service's `imageIdsFromSourcePod` only reads statuses). Undefined unless
 * every image is pinned that way.
 */
export function pinnedImageVolumes(vmi: VirtualMachineInstance, sourcePod: V1Pod): Record<string, string> | undefined {
  const ids: Record<string, string> = {};
  for (const [volume] of renderVolumesImageNames(vmi)) {
    const reference = sourcePod.spec?.volumes?.find((v) => v.name === volume)?.image?.reference;
    if (!reference?.includes('@sha256:')) return undefined;
    ids[volume] = reference;
  }
  return ids;
}

/**
 * The source node's labels as the host-model CPU selectors should see them on the re-migration
 * path, where the renderer is not given the source pod: KubeVirt copies a source pod's own
 * `cpu-model-migration.node.kubevirt.io/*` / `cpu-feature.node.kubevirt.io/*` selectors (from an
 * earlier migration) instead of deriving new ones from the node, so the model does not drift
 * with each hop. Those selectors are turned back into the node labels they came from
 * (`host-model-cpu…` / `host-model-required-features…`) in place of the node's own; the
 * renderer then maps them forward to the very same selectors. The vendor label is kept.
 */
export function hostModelLabelsForRemigration(nodeLabels: Readonly<Record<string, string>>, sourcePod: V1Pod): Record<string, string> {
  const selectors = Object.entries(sourcePod.spec?.nodeSelector ?? {});
  const copied = selectors.filter(([k]) => k.startsWith(CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX) || k.startsWith(CPU_FEATURE_NODE_LABEL_PREFIX));
  if (copied.length === 0) return { ...nodeLabels };
  const labels = Object.fromEntries(
    Object.entries(nodeLabels).filter(([k]) => !k.startsWith(HOST_MODEL_CPU_NODE_LABEL_PREFIX) && !k.startsWith(HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX)),
  );
  for (const [k, v] of copied) {
    if (k.startsWith(CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX)) labels[HOST_MODEL_CPU_NODE_LABEL_PREFIX + k.slice(CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX.length)] = v;
    else labels[HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX + k.slice(CPU_FEATURE_NODE_LABEL_PREFIX.length)] = v;
  }
  return labels;
}

/** The cluster facts the target pod is rendered with, as the VMI controller reads them for the launcher pod. */
export interface TargetPodFacts {
  /** The backend-storage claim the target mounts (backend-pvcs.ts). */
  backendPvc?: string | undefined;
  /** What is known of the claims it mounts (volume and access modes, UID), as KubeVirt's PVC informer. */
  pvcs?: Record<string, PvcInfo>;
  /** The namespace's quota and label facts (automatic limits). */
  namespace?: NamespaceInfo;
  /** The Multus networks' device-plugin resources (ExternalNetResourceInjection off), as for the launcher pod. */
  networkResources?: Record<string, string>;
}

/**
 * The target pod for `migration` of `vmi`, rendered by the template service. `sourceNodeLabels`
 * (the labels of the node the VMI runs on) give the host-model CPU and CPU vendor selectors
 * (reference §b.8); `facts` what the template service reads from the cluster.
 */
export function renderMigrationTargetPod(
  vmi: VirtualMachineInstance,
  migration: VirtualMachineInstanceMigration,
  sourcePod: V1Pod,
  config: ClusterConfig,
  sourceNodeLabels: Readonly<Record<string, string>> = {},
  facts: TargetPodFacts = {},
): V1Pod {
  const backend = { ...(facts.backendPvc ? { backendPvc: facts.backendPvc } : {}), ...(facts.pvcs ? { pvcs: facts.pvcs } : {}), ...(facts.namespace ? { namespace: facts.namespace } : {}), ...(facts.networkResources ? { networkResources: facts.networkResources } : {}) };
  const pinned = renderVolumesImageNames(vmi).length > 0 ? pinnedImageVolumes(vmi, sourcePod) : undefined;
  // Re-migration: keep the digests the VMI already runs. The renderer does not see the source
  // pod on this path, so its CPU selectors come in through the node labels instead.
  if (pinned) return renderTargetPod(vmi, migration, undefined, config, { ...backend, imageIds: pinned, sourceNodeLabels: hostModelLabelsForRemigration(sourceNodeLabels, sourcePod) });
  return renderTargetPod(vmi, migration, sourcePod, config, { ...backend, sourceNodeLabels: { ...sourceNodeLabels } });
}
