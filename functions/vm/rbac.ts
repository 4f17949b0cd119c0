/**
 * What the vm controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-vm` is bound to the user
 * `virt-reconciler:vm` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const vmRbac: readonly PolicyRule[] = [
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines/status'], verbs: ['patch'] },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['list'], why: 'The KubeVirt CR: the feature gates that decide how volume hotplug goes (declarative or not).' },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get', 'create', 'delete', 'patch'], why: "The VM's VMI: created from the template, stopped by deleting it, finalizer and labels patched, hotplugged volumes and disks patched into its spec; a volume migration's migratedVolumes, VolumesChange condition and moved volumes." },
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['create'], why: 'The start revision a VMI is created from (an online snapshot reads the spec back from it).' },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datavolumes'], verbs: ['get', 'create'], why: 'dataVolumeTemplates.' },
  { apiGroups: ['instancetype.kubevirt.io'], resources: ['virtualmachineinstancetypes', 'virtualmachineclusterinstancetypes', 'virtualmachinepreferences', 'virtualmachineclusterpreferences'], verbs: ['get'], why: "Instance types and preferences: read to resolve a VM's matchers and pin them." },
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get', 'create', 'delete'], why: 'The revisions pinning them: read, created, and deleted once upgraded to v1beta1.' },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'patch'], why: "inferFromVolume: the default instance type / preference labels of a volume's PVC or DataSource; a memory dump's claim annotated kubevirt.io/memory-dump with the dump's file name; a volume migration's source and destination claims (validated, described in migratedVolumes)." },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datasources'], verbs: ['get'] },
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get'], why: "Changed-block tracking: the VM's namespace labels, when the KubeVirt CR sets a namespace selector; a DataVolume cloned from another namespace: that namespace must exist (clone-auth.ts)." },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'], why: "A DataVolume cloned from another namespace: may the VM's service account clone from there (CDI's SubjectAccessReviews)." },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
