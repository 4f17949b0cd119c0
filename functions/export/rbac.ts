/**
 * What the export controller's reconcile may do in the cluster, and nothing more: the calls of its
 * KubeClient (deps.ts). Its ClusterRole `virt-reconciler-export` is bound to the user
 * `virt-reconciler:export` (an EKS access entry maps its Lambda role to it: docs/deploy-aws.md); on
 * the real test lane every suite runs the controller under exactly this role (docs/control-plane.md).
 */
import type { PolicyRule } from '../../shared/reconcile/define-controller.ts';

export const exportRbac: readonly PolicyRule[] = [
  { apiGroups: ['export.kubevirt.io'], resources: ['virtualmachineexports'], verbs: ['get', 'delete'] },
  { apiGroups: ['export.kubevirt.io'], resources: ['virtualmachineexports/status'], verbs: ['update'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'create'], why: 'Sources: a claim (and its DataVolume), a VM (its VMI, its backend claim by label), a snapshot (its content and CSI VolumeSnapshots, restored into claims the export owns).' },
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datavolumes'], verbs: ['get'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines', 'virtualmachineinstances'], verbs: ['get'] },
  { apiGroups: ['snapshot.kubevirt.io'], resources: ['virtualmachinesnapshots', 'virtualmachinesnapshotcontents'], verbs: ['get'] },
  { apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get'] },
  { apiGroups: ['backup.kubevirt.io'], resources: ['virtualmachinebackups', 'virtualmachinebackuptrackers'], verbs: ['get'], why: "Backup sources: the backup (its tracker names the VM); the tunnel CA kubevirt-backup-ca read with the configmaps below." },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['list'], why: 'The KubeVirt CR (certificate rotation, image, its namespace) and the CA virt-operator publishes.' },
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'create', 'delete'], why: 'The exporter: pod (pods are listed for claims in use), service, token and certificate Secrets (the CA Secret read to sign), the VM manifest ConfigMap (the CA bundle read).' },
  { apiGroups: [''], resources: ['services', 'secrets', 'configmaps'], verbs: ['get', 'create'] },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['list'], why: "External links: the Ingress in KubeVirt's namespace to the export proxy (its TLS secret read with the secrets above)." },
  { apiGroups: ['route.openshift.io'], resources: ['routes'], verbs: ['list'], why: "External links on OpenShift: virt-operator's Route to the export proxy (the certificate from kube-root-ca.crt, read with the configmaps above); a cluster without the group answers 404." },
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get'], why: "The VM manifest: the VM's instance type and preference expanded into it, from the revisions it pins or the objects it names." },
  { apiGroups: ['instancetype.kubevirt.io'], resources: ['virtualmachineinstancetypes', 'virtualmachineclusterinstancetypes', 'virtualmachinepreferences', 'virtualmachineclusterpreferences'], verbs: ['get'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
