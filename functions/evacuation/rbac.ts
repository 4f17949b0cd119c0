/**
 * What the evacuation controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-evacuation` is bound to the user
 * `virt-reconciler:evacuation` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const evacuationRbac: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['list'], why: 'Every VMI (those on the node) and every migration (the unfinished ones); evacuation migrations are created.' },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'], verbs: ['list', 'create'] },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['list'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'], why: 'Launcher pods (a VMI with two live pods is still migrating).' },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
