/**
 * What the node controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-node` is bound to the user
 * `virt-reconciler:node` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const nodeRbac: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['list', 'patch'], why: "The node's VMIs (by the kubevirt.io/nodeName label) and the patch that fails them; every VMI's TSC frequency hint (the topology updater)." },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['list'], why: "The KubeVirt CR's minimumClusterTSCFrequency (the topology updater)." },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'], why: 'The pods on the node (alive launchers, the virt-handler pod).' },
  { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['list'], why: 'The orphan check counts virt-handler DaemonSets.' },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
