/**
 * What the pool controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-pool` is bound to the user
 * `virt-reconciler:pool` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const poolRbac: readonly PolicyRule[] = [
  { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools'], verbs: ['get', 'patch'] },
  { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools/status'], verbs: ['update'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'], why: 'Its VMs: listed per namespace, created, updated to a new revision, released, deleted.' },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['list', 'delete', 'patch'], why: 'Their VMIs: restarted (deleted) or relabelled by a proactive update.' },
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['list', 'create', 'delete'], why: 'One revision per pool generation.' },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'patch'], why: "State preservation: the VM's claims and DataVolumes lose their owner reference." },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datavolumes'], verbs: ['get', 'patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
