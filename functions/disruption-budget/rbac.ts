/**
 * What the disruption-budget controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-disruption-budget` is bound to the user
 * `virt-reconciler:disruption-budget` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const disruptionBudgetRbac: readonly PolicyRule[] = [
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['list', 'delete'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get'], why: "The VMI, as the events' subject." },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
