/**
 * What the restore controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-restore` is bound to the user
 * `virt-reconciler:restore` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const restoreRbac: readonly PolicyRule[] = [
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinerestores'], verbs: ['get', 'update', 'patch'] },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinerestores/status'], verbs: ['update'] },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshots', 'virtualmachinesnapshotcontents'], verbs: ['get'], why: 'The snapshot and content restored from, and their VolumeSnapshots.' },
  { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'create', 'update'], why: 'The target VM: created or updated, its restoreInProgress set and cleared; its VMI read.' },
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get', 'create', 'patch'], why: "The snapshot's instance type and preference revisions copied back for the target, then owned by it." },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines/status'], verbs: ['patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get'] },
  { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachines/stop'], verbs: ['update'], why: 'StopTarget: the VM stopped through virt-api (aggregated by the API server).' },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'create', 'update', 'delete'], why: 'The restore PVCs and DataVolumes (InPlace deletes the old claim; cleanup deletes dropped DataVolumes and lists the backend claims labelled restore.kubevirt.io/cleanup-backend-pvc).' },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datavolumes'], verbs: ['get', 'create', 'patch', 'delete'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
