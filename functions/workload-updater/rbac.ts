/**
 * What the workload-updater controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-workload-updater` is bound to the user
 * `virt-reconciler:workload-updater` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const workloadUpdaterRbac: readonly PolicyRule[] = [
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['get', 'list'] },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts/status'], verbs: ['patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['list'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'], verbs: ['list', 'create', 'delete'], why: 'Workload-update migrations are created, and deleted to abort a change.' },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'], why: "The Evict method: the VMI's current launcher pod, evicted." },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
