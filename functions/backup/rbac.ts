/**
 * What the backup controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-backup` is bound to the user
 * `virt-reconciler:backup` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const backupRbac: readonly PolicyRule[] = [
  { apiGroups: ['backup.kubevirt.io'], resources: ['virtualmachinebackups'], verbs: ['get', 'patch'] },
  { apiGroups: ['backup.kubevirt.io'], resources: ['virtualmachinebackups/status'], verbs: ['update'] },
  { apiGroups: ['backup.kubevirt.io'], resources: ['virtualmachinebackuptrackers'], verbs: ['get'], why: 'The tracker: read, its checkpoint and redefinition flag patched on /status.' },
  { apiGroups: ['backup.kubevirt.io'], resources: ['virtualmachinebackuptrackers/status'], verbs: ['patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get', 'patch'], why: "The source: the VM read, its VMI's utility volumes and backupStatus patched; the target claim." },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get'] },
  { apiGroups: ['export.kubevirt.io'], resources: ['virtualmachineexports'], verbs: ['get', 'delete'], why: "A pull backup's VMExport, deleted at cleanup." },
  { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachineinstances/backup', 'virtualmachineinstances/redefine-checkpoint'], verbs: ['update'], why: "virt-handler, through virt-api: Start/Abort, and the tracker's checkpoint redefinition." },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
