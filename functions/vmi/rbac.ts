/**
 * What the vmi controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-vmi` is bound to the user
 * `virt-reconciler:vmi` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const vmiRbac: readonly PolicyRule[] = [
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get', 'list', 'update', 'patch'], why: 'The VMI itself; listed across the cluster only at the hand-off of an autoattachVSOCK VMI, for the VSOCK CIDs already taken.' },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations', 'kubevirts'], verbs: ['list'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'create', 'delete', 'patch'], why: "Launcher pods: created, listed by the VMI's label, deleted, annotated (the Multus networks of a NIC hot-plug, network-info); readiness-gate conditions on /status." },
  { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'create', 'delete'], why: 'Volumes: the PVC or DataVolume behind a VMI volume is read, never written; the one PVC this controller writes is the backend storage of a persistent TPM/EFI (listed by label, created, deleted once the VMI no longer needs it).' },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datavolumes'], verbs: ['get'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['list'], why: "The backend PVC's class and access mode: the default class, its CDI StorageProfile." },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['storageprofiles'], verbs: ['list'] },
  { apiGroups: [''], resources: ['resourcequotas'], verbs: ['list'], why: "Automatic resource limits: the namespace's ResourceQuotas (do they limit CPU or memory?) and its labels (the memory-limit ratio, the cluster's CPU-limit namespace selector)." },
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['list'], why: 'Topology hints: the lowest TSC frequency the nodes report, for a VMI that needs one (invtsc, Hyper-V re-enlightenment), once before its launcher pod.' },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], why: "A hook sidecar's script: its ConfigMap must exist before the launcher pod is rendered." },
  { apiGroups: ['k8s.cni.cncf.io'], resources: ['network-attachment-definitions'], verbs: ['get'], why: "ExternalNetResourceInjection off: each Multus network's NetworkAttachmentDefinition names the device-plugin resource the launcher pod requests (KubeVirt's template service reads it at every render)." },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
