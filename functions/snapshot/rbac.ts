/**
 * What the snapshot controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-snapshot` is bound to the user
 * `virt-reconciler:snapshot` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const snapshotRbac: readonly PolicyRule[] = [
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshots'], verbs: ['get', 'patch'] },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshots/status'], verbs: ['update'] },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshotcontents'], verbs: ['get', 'list', 'create', 'patch', 'delete'], why: 'Its content: created, its finalizer let go, deleted with the snapshot; contents of a deleted snapshot are listed per namespace.' },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshotcontents/status'], verbs: ['update'] },
  { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get', 'create'], why: "One VolumeSnapshot per volume, of the class chosen for the claim's StorageClass." },
  { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshotclasses'], verbs: ['list'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['storageprofiles', 'datavolumes'], verbs: ['get'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'patch'], why: 'The source VM: locked (status.snapshotInProgress and its finalizer), volumeSnapshotStatuses.' },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines/status'], verbs: ['patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get'] },
  { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachineinstances/freeze', 'virtualmachineinstances/unfreeze'], verbs: ['update'], why: 'The guest agent through virt-api (aggregated by the API server).' },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list'], why: "The VM's claims (the backend one by label), the pods using them offline, the start revision; the instance type and preference revisions are copied for the snapshot (create)." },
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get', 'create'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
