/**
 * What the replicaset controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-replicaset` is bound to the user
 * `virt-reconciler:replicaset` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const replicaSetRbac: readonly PolicyRule[] = [
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancereplicasets'], verbs: ['get', 'update'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancereplicasets/status'], verbs: ['update'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['list', 'create', 'delete', 'patch'], why: 'Its VMIs: listed per namespace, created, deleted, adopted and released by patch.' },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
