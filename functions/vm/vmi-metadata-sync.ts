/**
 * The VM template's labels and annotations KubeVirt keeps on the running VMI (the VM
 * controller's `syncDynamicAnnotationsAndLabelsToVMI`): the descheduler's evict /
 * prefer-no-eviction annotations and the deployment's additional keys from the template's
 * metadata, and `kubevirt.io/skip-backup-hooks` from the VM's own. The VMI controller carries
 * them on to the launcher pod (functions/vmi/pod-sync.ts). Pure.
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { SKIP_BACKUP_HOOKS_ANNOTATION } from '../../shared/api/well-known.ts';
import type { ClusterConfig } from '../../shared/config/cluster-config.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { DESCHEDULER_EVICT_ANNOTATION, DESCHEDULER_PREFER_NO_EVICTION_ANNOTATION, metadataMapOps, syncKeys } from '../../shared/template/dynamic-sync.ts';

/** The JSON patch that brings the VMI's synced labels and annotations to the VM's (empty: nothing to do). */
export function vmiSyncOps(vm: VirtualMachine, vmi: VirtualMachineInstance, config: Pick<ClusterConfig, 'launcherLabelsSync' | 'launcherAnnotationsSync'>): JsonPatchOperation[] {
  const template = vm.spec.template.metadata ?? {};
  const ops: JsonPatchOperation[] = [];
  const labels = syncKeys(config.launcherLabelsSync, template.labels ?? {}, vmi.metadata?.labels ?? {});
  if (labels) ops.push(...metadataMapOps('labels', vmi.metadata?.labels, labels));
  const fromTemplate = syncKeys([DESCHEDULER_EVICT_ANNOTATION, DESCHEDULER_PREFER_NO_EVICTION_ANNOTATION, ...config.launcherAnnotationsSync], template.annotations ?? {}, vmi.metadata?.annotations ?? {});
  const annotations = syncKeys([SKIP_BACKUP_HOOKS_ANNOTATION], vm.metadata?.annotations ?? {}, fromTemplate ?? vmi.metadata?.annotations ?? {}) ?? fromTemplate;
  if (annotations) ops.push(...metadataMapOps('annotations', vmi.metadata?.annotations, annotations));
  return ops;
}
