/**
 * The migration target pod (reference §b.8): the launcher pod rendered again with image
 * volumes pinned to the digests the source pod resolved, plus what the migration controller
 * adds before creating it — anti-affinity to the source (or NotIn the source node for
 * decentralized migrations), the migration's added node selector, its label and annotation,
 * host-model CPU selectors from the source node, and the SELinux level.
 */
import type { V1Pod, V1PodAffinityTerm } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/index.ts';
import {
  CPU_FEATURE_NODE_LABEL_PREFIX, CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX, CPU_VENDOR_NODE_LABEL_PREFIX, CREATED_BY_LABEL,
  HOST_MODEL_CPU_NODE_LABEL_PREFIX, HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX, HOSTNAME_NODE_LABEL,
  MIGRATION_JOB_NAME_ANNOTATION, MIGRATION_JOB_UID_LABEL,
} from '../api/well-known.ts';
import { InvalidInputError } from '../errors.ts';
import { gateEnabled, type ClusterConfig } from '../config/cluster-config.ts';
import { podHasOrdinalInterfaceName } from '../network/name-scheme.ts';
import { networkStatusesFromPod } from '../network/network-status.ts';
import { KERNEL_BOOT_VOLUME, renderVolumesImageNames } from './render-volumes.ts';
import { renderLauncherPod, type RenderOptions } from './render-launcher-pod.ts';
import { sortedRecord } from './render-placement.ts';
import { vmiUid } from './vmi-traits.ts';

/** What the target pod needs to know about the source side. */
export interface TargetPodOptions extends RenderOptions {
  /** Labels of the source node (host-model CPU and vendor labels). */
  sourceNodeLabels?: Record<string, string>;
  /** Decentralized migration: keep off the source node by name instead of by pod anti-affinity. */
  decentralizedSourceNode?: string;
}

/** `image@sha256:…` from a container status imageID, or undefined when there is no digest. */
function pinnedImage(image: string, imageId: string | undefined): string | undefined {
  const at = imageId?.indexOf('@sha256:') ?? -1;
  if (imageId === undefined || at < 0) return undefined;
  const repo = image.includes('@') ? image.slice(0, image.indexOf('@')) : image.replace(/:[^/:]+$/, '');
  return `${repo}${imageId.slice(at)}`;
}

/** Image digests the source pod resolved, by volume name (error when one cannot be reproduced). */
export function imageIdsFromSourcePod(vmi: VirtualMachineInstance, sourcePod: V1Pod): Record<string, string> {
  const statuses = [...(sourcePod.status?.initContainerStatuses ?? []), ...(sourcePod.status?.containerStatuses ?? [])];
  const ids: Record<string, string> = {};
  for (const [volume, image] of renderVolumesImageNames(vmi)) {
    const status = statuses.find((s) => s.name === `volume${volume}` || s.name === `volume${volume}-init`);
    const pinned = pinnedImage(image, status?.imageID);
    if (!pinned) {
      const field = volume === KERNEL_BOOT_VOLUME ? 'spec.domain.firmware.kernelBoot.container.image' : `spec.volumes[${volume}].containerDisk.image`;
      throw new InvalidInputError(field, `no reproducible digest for '${image}' in the source pod's container statuses`);
    }
    ids[volume] = pinned;
  }
  return ids;
}

/** The SELinux level (4th and later fields) of `status.selinuxContext`. */
export function selinuxLevel(context: string | undefined): string | undefined {
  if (!context) return undefined;
  const parts = context.split(':');
  return parts.length >= 4 ? parts.slice(3).join(':') : undefined;
}

/** The migration target pod for `migration` of `vmi`. */
export function renderTargetPod(
  vmi: VirtualMachineInstance,
  migration: VirtualMachineInstanceMigration,
  sourcePod: V1Pod | undefined,
  config: ClusterConfig,
  opts: TargetPodOptions = {},
): V1Pod {
  const imageIds = sourcePod ? imageIdsFromSourcePod(vmi, sourcePod) : opts.imageIds;
  // KubeVirt's GenerateFromSource: a source pod whose secondary interfaces Multus named the old
  // ordinal way (net1, net2…) gets a target named the same way — virt-handler and the launcher
  // (the SR-IOV device info among them) find each network by that name — unless the
  // PodSecondaryInterfaceNamingUpgrade gate lets the target move to the hashed names.
  const ordinal = sourcePod !== undefined && !gateEnabled(config, 'PodSecondaryInterfaceNamingUpgrade') && podHasOrdinalInterfaceName(networkStatusesFromPod(sourcePod));
  const pod = renderLauncherPod(vmi, config, { ...opts, ...(imageIds && { imageIds }), ...(ordinal && { ordinalInterfaces: true }) });
  const spec = pod.spec as NonNullable<V1Pod['spec']>;
  const meta = pod.metadata as NonNullable<V1Pod['metadata']>;
  const migrationUid = migration.metadata?.uid;
  const migrationName = migration.metadata?.name;
  if (!migrationUid) throw new InvalidInputError('migration.metadata.uid', 'is required');
  if (!migrationName) throw new InvalidInputError('migration.metadata.name', 'is required');

  spec.affinity ??= {};
  if (opts.decentralizedSourceNode) {
    const na = (spec.affinity.nodeAffinity ??= {});
    const req = (na.requiredDuringSchedulingIgnoredDuringExecution ??= { nodeSelectorTerms: [] });
    const notIn = { key: HOSTNAME_NODE_LABEL, operator: 'NotIn', values: [opts.decentralizedSourceNode] };
    if (req.nodeSelectorTerms.length === 0) req.nodeSelectorTerms.push({ matchExpressions: [notIn] });
    else for (const t of req.nodeSelectorTerms) t.matchExpressions = [...(t.matchExpressions ?? []), notIn];
  } else {
    const term: V1PodAffinityTerm = { labelSelector: { matchLabels: { [CREATED_BY_LABEL]: vmiUid(vmi) } }, topologyKey: HOSTNAME_NODE_LABEL };
    const anti = (spec.affinity.podAntiAffinity ??= {});
    anti.requiredDuringSchedulingIgnoredDuringExecution = [...(anti.requiredDuringSchedulingIgnoredDuringExecution ?? []), term];
  }

  // Template selectors win over the migration's added ones.
  const selector: Record<string, string> = { ...(migration.spec?.addedNodeSelector ?? {}), ...(spec.nodeSelector ?? {}) };
  // Only a VMI whose spec names `host-model` gets the source node's host-model selectors, as in
  // KubeVirt's migration controller: a VMI without a model (no virt-api defaulting it) gets none.
  if (vmi.spec.domain.cpu?.model === 'host-model') {
    const fromSourcePod = Object.entries(sourcePod?.spec?.nodeSelector ?? {})
      .filter(([k]) => k.startsWith(CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX) || k.startsWith(CPU_FEATURE_NODE_LABEL_PREFIX));
    if (fromSourcePod.length > 0) Object.assign(selector, Object.fromEntries(fromSourcePod));
    else {
      for (const [k, v] of Object.entries(opts.sourceNodeLabels ?? {})) {
        if (k.startsWith(HOST_MODEL_CPU_NODE_LABEL_PREFIX)) selector[CPU_MODEL_MIGRATION_NODE_LABEL_PREFIX + k.slice(HOST_MODEL_CPU_NODE_LABEL_PREFIX.length)] = v;
        if (k.startsWith(HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX)) selector[CPU_FEATURE_NODE_LABEL_PREFIX + k.slice(HOST_MODEL_REQUIRED_FEATURES_NODE_LABEL_PREFIX.length)] = v;
      }
    }
  }
  if (!Object.keys(selector).some((k) => k.startsWith(CPU_VENDOR_NODE_LABEL_PREFIX))) {
    const vendor = Object.keys(opts.sourceNodeLabels ?? {}).find((k) => k.startsWith(CPU_VENDOR_NODE_LABEL_PREFIX));
    if (vendor) selector[vendor] = 'true';
  }
  spec.nodeSelector = sortedRecord(selector);

  meta.labels = { ...(meta.labels ?? {}), [MIGRATION_JOB_UID_LABEL]: migrationUid };
  meta.annotations = { ...(meta.annotations ?? {}), [MIGRATION_JOB_NAME_ANNOTATION]: migrationName };

  const ctx = vmi.status?.selinuxContext ?? '';
  if (ctx !== 'none' && config.matchSELinuxLevelOnMigration) {
    // KubeVirt's setTargetPodSELinuxLevel: "none" means a node without SELinux; an empty context
    // means virt-handler has not written it yet (the target cannot share the source's categories);
    // a context that is not user:role:type is malformed; one without a level sets nothing.
    if (ctx === '') throw new InvalidInputError('status.selinuxContext', 'SELinux context not set on VMI status');
    if (ctx.split(':').length < 3) throw new InvalidInputError('status.selinuxContext', `invalid Label: ${JSON.stringify(ctx)}`);
    const level = selinuxLevel(ctx);
    if (level) spec.securityContext = { ...(spec.securityContext ?? {}), seLinuxOptions: { ...(spec.securityContext?.seLinuxOptions ?? {}), level } };
  }
  return pod;
}
