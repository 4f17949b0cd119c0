/**
 * The VMI's labels and annotations KubeVirt keeps on its launcher pod (the VMI controller's
 * `syncDynamicAnnotationsAndLabelsToPod`, every pass while the pod exists): the
 * `kubevirt.io/nodeName` and `kubevirt.io/outdatedLauncherImage` labels, the descheduler's
 * evict / prefer-no-eviction annotations, Velero's backup-hook annotations (as the VMI's
 * `kubevirt.io/skip-backup-hooks` now asks), and the deployment's additional keys. Pure.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import {
  NODE_NAME_LABEL, OUTDATED_LAUNCHER_IMAGE_LABEL, VELERO_POST_HOOK_COMMAND, VELERO_POST_HOOK_CONTAINER, VELERO_PRE_HOOK_COMMAND,
  VELERO_PRE_HOOK_CONTAINER, VELERO_PRE_HOOK_TIMEOUT,
} from '../../shared/api/well-known.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { DESCHEDULER_EVICT_ANNOTATION, DESCHEDULER_PREFER_NO_EVICTION_ANNOTATION, metadataMapOps, syncKeys } from '../../shared/template/dynamic-sync.ts';
import { backupHookAnnotations } from '../../shared/template/render-metadata.ts';

const VELERO_KEYS = [VELERO_PRE_HOOK_CONTAINER, VELERO_PRE_HOOK_COMMAND, VELERO_PRE_HOOK_TIMEOUT, VELERO_POST_HOOK_CONTAINER, VELERO_POST_HOOK_COMMAND];

/** The JSON patch that brings `pod`'s synced labels and annotations to `vmi`'s (empty: nothing to do). */
export function podSyncOps(vmi: VirtualMachineInstance, pod: V1Pod, config: Pick<ClusterConfig, 'launcherLabelsSync' | 'launcherAnnotationsSync'>): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const labels = syncKeys([NODE_NAME_LABEL, OUTDATED_LAUNCHER_IMAGE_LABEL, ...config.launcherLabelsSync], vmi.metadata?.labels ?? {}, pod.metadata?.labels ?? {});
  if (labels) ops.push(...metadataMapOps('labels', pod.metadata?.labels, labels));
  const source = { ...vmi.metadata?.annotations, ...backupHookAnnotations(vmi) };
  const patterns = [DESCHEDULER_EVICT_ANNOTATION, DESCHEDULER_PREFER_NO_EVICTION_ANNOTATION, ...config.launcherAnnotationsSync, ...VELERO_KEYS];
  const annotations = syncKeys(patterns, source, pod.metadata?.annotations ?? {});
  if (annotations) ops.push(...metadataMapOps('annotations', pod.metadata?.annotations, annotations));
  return ops;
}
