/**
 * What the migration controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-migration` is bound to the user
 * `virt-reconciler:migration` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const migrationRbac: readonly PolicyRule[] = [
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'], verbs: ['get', 'list', 'update', 'delete'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations/status'], verbs: ['update'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get', 'patch'], why: 'The migrating VMI: read, its runtime user set for the target (root ↔ non-root), and its migration state / target handed off by patch.' },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['list'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'create', 'delete', 'patch'], why: "Target pods (and a hotplug VMI's target attachment pods): created, listed by the migration's label, deleted; a ready target pod's network-info (SR-IOV) annotation and, once its domain is ready, its migration-target-ready-timestamp annotation." },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'create', 'patch', 'delete'], why: "Backend storage (persistent TPM/EFI): the source claim read, the migration's own target claim created, handed over by patch, and the one left behind deleted; classes and CDI storage profiles listed to choose the target claim's class and access mode." },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'create', 'delete'], why: "An interrupted backend-storage migration: the recover-<migration> Job that checks the source claim's meta/migrated marker, read, created, and deleted to retry." },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['list'] },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['storageprofiles'], verbs: ['list'] },
  { apiGroups: [''], resources: ['nodes', 'namespaces'], verbs: ['get'], why: 'The source node (its host-model CPU labels) and the namespace (MigrationPolicy selectors; its labels for automatic limits).' },
  { apiGroups: [''], resources: ['nodes'], verbs: ['list'], why: 'An unschedulable host-model target pod: is any other node able to run its CPU model (NoSuitableNodesForHostModelMigration)?' },
  { apiGroups: [''], resources: ['resourcequotas'], verbs: ['list'], why: "The target pod's automatic CPU and memory limits: the namespace's quotas, as for the launcher pod." },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], why: "A hook sidecar's ConfigMap: the target pod is not rendered while it is missing, as KubeVirt's template service refuses." },
  { apiGroups: ['k8s.cni.cncf.io'], resources: ['network-attachment-definitions'], verbs: ['get'], why: "ExternalNetResourceInjection off: the Multus networks' NetworkAttachmentDefinitions, for the target pod's device-plugin resources, as for the launcher pod." },
  { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachineinstances/backup'], verbs: ['update'], why: 'A system-critical migration aborts the backup running on its VMI (virt-api, a PUT).' },
  { apiGroups: ['migrations.kubevirt.io'], resources: ['migrationpolicies'], verbs: ['list'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
