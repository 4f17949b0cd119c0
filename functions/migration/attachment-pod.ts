/**
 * The hotplug attachment pod of a migration's target (reference-vm-vmi-depth §3, KubeVirt's
 * migration `createAttachmentPod`), pure. A VMI with hotplugged volumes needs them on the target
 * node before virt-handler there can take the domain: once the target pod is ready (phase
 * Pending), the migration creates one `hp-volume-` pod for the VMI's whole hotplug set, rendered
 * by the template service against the target pod (so owned by it and bound to its node), every
 * volume mounted (KubeVirt renders it with the VMI's volume statuses cleared), and labelled and
 * annotated for the migration like the target pod. Pending → Scheduling and Scheduling →
 * Scheduled wait for it to be ready; the hand-off names it (`targetAttachmentPodUID`); a target
 * attachment pod that ends fails the migration. `reconcile.ts` creates it.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { MIGRATION_JOB_NAME_ANNOTATION, MIGRATION_JOB_UID_LABEL } from '../../shared/api/well-known.ts';
import { isPodReady, podsControlledBy } from '../../shared/predicates/pods.ts';
import { hotplugVolumes } from '../../shared/storage/hotplug-volumes.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import { attachmentVolume, renderAttachmentPod } from '../../shared/template/render-attachment-pod.ts';

/** KubeVirt's `AttachmentPods(targetPod)[0]`: the first pod the target pod controls. */
export function targetAttachmentPod(pods: readonly V1Pod[], targetPod: V1Pod | undefined): V1Pod | undefined {
  return targetPod ? podsControlledBy(pods, targetPod)[0] : undefined;
}

/** The target side is ready for the next phase: no hotplug volumes, or a ready attachment pod. */
export function attachmentReady(hotplug: boolean, attachmentPod: V1Pod | undefined): boolean {
  return !hotplug || (attachmentPod !== undefined && isPodReady(attachmentPod));
}

/** The claims the target attachment pod mounts: the VMI's hotplug volumes, as the source pod leaves them out. */
export function targetAttachmentClaims(vmi: VirtualMachineInstance, sourcePod: V1Pod): string[] {
  return [...new Set(hotplugVolumes(vmi, sourcePod).map((v) => v.claimName))];
}

export type TargetAttachmentPod = { readonly kind: 'pod'; readonly pod: V1Pod } | { readonly kind: 'error'; readonly message: string };

/**
 * The attachment pod for `targetPod`, or why not: KubeVirt's `VirtVolumesToPVCMap` fails on a
 * claim that does not exist ("claim %s not found"). `pvcs` are the claims by name, as read.
 * The template service's own errors (no SELinux context) are thrown as {@link InvalidInputError}.
 */
export function renderTargetAttachmentPod(
  vmi: VirtualMachineInstance,
  migration: VirtualMachineInstanceMigration,
  sourcePod: V1Pod,
  targetPod: V1Pod,
  pvcs: ReadonlyMap<string, V1PersistentVolumeClaim>,
  config: ClusterConfig,
): TargetAttachmentPod {
  const volumes = hotplugVolumes(vmi, sourcePod);
  const missing = volumes.find((v) => !pvcs.has(v.claimName));
  if (missing) return { kind: 'error', message: `failed to get PVC map: claim ${missing.claimName} not found` };
  // No phase given: every volume is mounted into the new pod, as with KubeVirt's reset statuses.
  const pod = renderAttachmentPod(volumes.map((v) => attachmentVolume(v, pvcs.get(v.claimName))), targetPod, vmi, config);
  const meta = pod.metadata ?? {};
  meta.labels = { ...meta.labels, [MIGRATION_JOB_UID_LABEL]: migration.metadata?.uid ?? '' };
  meta.annotations = { ...meta.annotations, [MIGRATION_JOB_NAME_ANNOTATION]: migration.metadata?.name ?? '' };
  return { kind: 'pod', pod: { ...pod, metadata: meta } };
}
