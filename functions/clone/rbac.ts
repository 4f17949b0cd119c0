/**
 * What the clone controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-clone` is bound to the user
 * `virt-reconciler:clone` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const cloneRbac: readonly PolicyRule[] = [
  { apiGroups: ['clone.kubevirt.io'], resources: ['virtualmachineclones'], verbs: ['get', 'delete'] },
  { apiGroups: ['clone.kubevirt.io'], resources: ['virtualmachineclones/status'], verbs: ['update'] },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshots', 'virtualmachinerestores'], verbs: ['get', 'create', 'delete'], why: 'The temporary snapshot and restore: created, read, deleted at the end; the content read.' },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshotcontents'], verbs: ['get'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get'], why: 'The source and target VMs, and the restored claims: read only.' },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
