/**
 * Descriptors of the resources the reconciler reads and writes: API group, version, plural (the
 * URL segment), kind, scope and subresources, typed by the object they hold. One table, so URLs,
 * RBAC, watches and call counters all spell a resource the same way, and the generic client
 * (shared/kube/client.ts) serves any resource named here without a method of its own.
 *
 * Adding a resource is one entry here (with its object type); nothing in the transports changes.
 */
import type {
  V1ConfigMap,
  V1ControllerRevision,
  V1DaemonSet,
  V1Job,
  V1Namespace,
  V1ObjectMeta,
  V1Node,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1ResourceQuota,
  V1Secret,
  V1Service,
  V1SubjectAccessReview,
  V1Ingress,
} from '@kubernetes/client-node';
import type { StorageProfileLike } from '../storage/backend-storage.ts';
import type { DataVolume } from './data-volume.ts';
import type { VirtualMachineBackup, VirtualMachineBackupTracker } from './backup.ts';
import type { VirtualMachineExport } from './export.ts';
import type { StorageClass, VirtualMachineClone, VirtualMachineRestore, VirtualMachineSnapshot, VirtualMachineSnapshotContent, VolumeSnapshot, VolumeSnapshotClass } from './snapshot.ts';
import type {
  KubeVirt,
  MigrationPolicy,
  VirtualMachine,
  VirtualMachineClusterInstancetype,
  VirtualMachineClusterPreference,
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
  VirtualMachineInstanceReplicaSet,
  VirtualMachineInstancetype,
  VirtualMachinePool,
  VirtualMachinePreference,
} from './kubevirt.gen.ts';

/** Where a resource lives in the API. `group` is `''` for the core group (`/api/v1`). */
export interface ResourceCoordinates {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  /** `false` for cluster-scoped resources (Node, Namespace, MigrationPolicy): no namespace in keys or URLs. */
  readonly namespaced: boolean;
}

/**
 * The subresources the generic client writes: `status`, `scale` for resources with replicas, and
 * pods' `eviction` (a POST of a policy/v1 Eviction).
 */
export type Subresource = 'status' | 'scale' | 'eviction';

/**
 * A resource and the type of its objects (`T` is only carried in the type: `Resource<V1Pod>`
 * makes `kube.get(PODS, …)` answer a `V1Pod`). `subresources` lists what the API serves, so
 * asking for a `/scale` a resource does not have is an error before any request.
 */
export interface Resource<T = unknown> extends ResourceCoordinates {
  readonly subresources: readonly Subresource[];
  /** Phantom: never set; ties the descriptor to its object type. */
  readonly __object?: T;
}

/** Declares a resource descriptor of object type `T`. */
export function defineResource<T>(r: ResourceCoordinates & { readonly subresources?: readonly Subresource[] }): Resource<T> {
  return Object.freeze({ ...r, subresources: Object.freeze([...(r.subresources ?? [])]) }) as Resource<T>;
}

/** `kubevirt.io` */
export const KUBEVIRT_GROUP = 'kubevirt.io';
/** `migrations.kubevirt.io` (MigrationPolicy) */
export const MIGRATIONS_GROUP = 'migrations.kubevirt.io';
/** `cdi.kubevirt.io` (DataVolume) */
export const CDI_GROUP = 'cdi.kubevirt.io';
/** `pool.kubevirt.io` (VirtualMachinePool) */
export const POOL_GROUP = 'pool.kubevirt.io';
/** `instancetype.kubevirt.io` (instance types and preferences) */
export const INSTANCETYPE_GROUP = 'instancetype.kubevirt.io';

/** No `/status`: KubeVirt's VMI CRD declares none (status, labels and finalizers are written in one update). */
export const VMIS = defineResource<VirtualMachineInstance>({
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachineinstances',
  kind: 'VirtualMachineInstance',
  namespaced: true,
});

export const VMS = defineResource<VirtualMachine>({
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachines',
  kind: 'VirtualMachine',
  namespaced: true,
  subresources: ['status'],
});

export const MIGRATIONS = defineResource<VirtualMachineInstanceMigration>({
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachineinstancemigrations',
  kind: 'VirtualMachineInstanceMigration',
  namespaced: true,
  subresources: ['status'],
});

/** VirtualMachineInstanceReplicaSet (`kubevirt.io/v1`), with `/status` and `/scale` as KubeVirt's CRD declares. */
export const VMI_REPLICA_SETS = defineResource<VirtualMachineInstanceReplicaSet>({
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachineinstancereplicasets',
  kind: 'VirtualMachineInstanceReplicaSet',
  namespaced: true,
  subresources: ['status', 'scale'],
});

/** VirtualMachinePool (`pool.kubevirt.io/v1beta1`), with `/status` and `/scale`. */
export const VM_POOLS = defineResource<VirtualMachinePool>({
  group: POOL_GROUP,
  version: 'v1beta1',
  plural: 'virtualmachinepools',
  kind: 'VirtualMachinePool',
  namespaced: true,
  subresources: ['status', 'scale'],
});

export const KUBEVIRTS = defineResource<KubeVirt>({
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'kubevirts',
  kind: 'KubeVirt',
  namespaced: true,
  subresources: ['status'],
});

/** Cluster-scoped. */
export const MIGRATION_POLICIES = defineResource<MigrationPolicy>({
  group: MIGRATIONS_GROUP,
  version: 'v1alpha1',
  plural: 'migrationpolicies',
  kind: 'MigrationPolicy',
  namespaced: false,
  subresources: ['status'],
});

/** VirtualMachineInstancetype (`instancetype.kubevirt.io/v1beta1`), namespaced; no subresources. */
export const INSTANCETYPES = defineResource<VirtualMachineInstancetype>({
  group: INSTANCETYPE_GROUP,
  version: 'v1beta1',
  plural: 'virtualmachineinstancetypes',
  kind: 'VirtualMachineInstancetype',
  namespaced: true,
});

/** VirtualMachineClusterInstancetype, cluster-scoped. */
export const CLUSTER_INSTANCETYPES = defineResource<VirtualMachineClusterInstancetype>({
  group: INSTANCETYPE_GROUP,
  version: 'v1beta1',
  plural: 'virtualmachineclusterinstancetypes',
  kind: 'VirtualMachineClusterInstancetype',
  namespaced: false,
});

/** VirtualMachinePreference, namespaced. */
export const PREFERENCES = defineResource<VirtualMachinePreference>({
  group: INSTANCETYPE_GROUP,
  version: 'v1beta1',
  plural: 'virtualmachinepreferences',
  kind: 'VirtualMachinePreference',
  namespaced: true,
});

/** VirtualMachineClusterPreference, cluster-scoped. */
export const CLUSTER_PREFERENCES = defineResource<VirtualMachineClusterPreference>({
  group: INSTANCETYPE_GROUP,
  version: 'v1beta1',
  plural: 'virtualmachineclusterpreferences',
  kind: 'VirtualMachineClusterPreference',
  namespaced: false,
});

export const DATA_VOLUMES = defineResource<DataVolume>({
  group: CDI_GROUP,
  version: 'v1beta1',
  plural: 'datavolumes',
  kind: 'DataVolume',
  namespaced: true,
  subresources: ['status'],
});

/** CDI DataSource (`cdi.kubevirt.io/v1beta1`), read for the default instance type labels of a DataVolume's `sourceRef`. */
export interface DataSource {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: { source?: DataSourceSource };
  /** Where a DataSource that points at another DataSource resolved to. */
  status?: { source?: DataSourceSource };
}
/** What a DataSource points at: a claim, a snapshot, or another DataSource. */
export interface DataSourceSource {
  pvc?: { name: string; namespace: string };
  snapshot?: { name: string; namespace: string };
  dataSource?: { name: string; namespace?: string };
}
export const DATA_SOURCES = defineResource<DataSource>({
  group: CDI_GROUP,
  version: 'v1beta1',
  plural: 'datasources',
  kind: 'DataSource',
  namespaced: true,
});

export const PODS = defineResource<V1Pod>({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, subresources: ['status', 'eviction'] });

export const PVCS = defineResource<V1PersistentVolumeClaim>({
  group: '',
  version: 'v1',
  plural: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  namespaced: true,
  subresources: ['status'],
});

export const CONFIG_MAPS = defineResource<V1ConfigMap>({ group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true });

export const SECRETS = defineResource<V1Secret>({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true });

/** Multus' NetworkAttachmentDefinition: only its annotations are read (the SR-IOV resource name). */
export interface NetworkAttachmentDefinition {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: { config?: string };
}

export const NETWORK_ATTACHMENT_DEFINITIONS = defineResource<NetworkAttachmentDefinition>({ group: 'k8s.cni.cncf.io', version: 'v1', plural: 'network-attachment-definitions', kind: 'NetworkAttachmentDefinition', namespaced: true });

export const EVENTS = defineResource<unknown>({ group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true });

/** Read for automatic resource limits: a quota that limits CPU or memory makes the launcher pod carry limits. */
export const RESOURCE_QUOTAS = defineResource<V1ResourceQuota>({ group: '', version: 'v1', plural: 'resourcequotas', kind: 'ResourceQuota', namespaced: true, subresources: ['status'] });

/** `networking.k8s.io/v1` Ingress: one in KubeVirt's namespace to the export proxy gives exports their external links. */
export const INGRESSES = defineResource<V1Ingress>({ group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', kind: 'Ingress', namespaced: true });

/**
 * `route.openshift.io/v1` Route (OpenShift only): virt-operator's Route to the export proxy gives
 * exports their external links where no Ingress does. A cluster that does not serve the group
 * answers 404, which means "no Routes".
 */
export const ROUTES = defineResource<{ metadata?: V1ObjectMeta; spec?: { to?: { kind?: string; name?: string } }; status?: { ingress?: { host?: string }[] } }>({ group: 'route.openshift.io', version: 'v1', plural: 'routes', kind: 'Route', namespaced: true });

/** Cluster-scoped, create only: the VM controller asks whether a VM's service account may clone a DataVolume's source. */
export const SUBJECT_ACCESS_REVIEWS = defineResource<V1SubjectAccessReview>({ group: 'authorization.k8s.io', version: 'v1', plural: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false });

/** Cluster-scoped; migration policies match on a namespace's labels. */
export const NAMESPACES = defineResource<V1Namespace>({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false, subresources: ['status'] });

/** Cluster-scoped; a migration target's host-model CPU selectors come from the source node's labels. */
export const NODES = defineResource<V1Node>({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, subresources: ['status'] });

/** `apps/v1` ControllerRevision: a pool's snapshot of its VM template per revision. */
export const CONTROLLER_REVISIONS = defineResource<V1ControllerRevision>({
  group: 'apps',
  version: 'v1',
  plural: 'controllerrevisions',
  kind: 'ControllerRevision',
  namespaced: true,
});

/** `apps/v1` DaemonSet: the node controller checks virt-handler's (label `kubevirt.io=virt-handler`). */
export const DAEMON_SETS = defineResource<V1DaemonSet>({ group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true, subresources: ['status'] });

/** `batch/v1` Job: the migration controller's `recover-<migration>` Job (backend storage). */
export const JOBS = defineResource<V1Job>({ group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true, subresources: ['status'] });

/** `policy/v1` PodDisruptionBudget: the disruption-budget controller deletes those an older KubeVirt left. */
export const PDBS = defineResource<V1PodDisruptionBudget>({ group: 'policy', version: 'v1', plural: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, subresources: ['status'] });

/**
 * `coordination.k8s.io/v1` Lease: virt-controller's leader election lock (`virt-controller` in
 * KubeVirt's namespace), which the cutover holds instead of it (shared/cutover/, docs/cutover.md).
 */
export const LEASES = defineResource<CoordinationLease>({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true });

/** A Lease as the API server answers it (raw JSON: MicroTime fields are RFC 3339 strings with microseconds). */
export interface CoordinationLease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string; annotations?: Record<string, string> };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export const SERVICES = defineResource<V1Service>({ group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true, subresources: ['status'] });

/** `export.kubevirt.io` (VirtualMachineExport) */
export const EXPORT_GROUP = 'export.kubevirt.io';
/** `snapshot.kubevirt.io` (VirtualMachineSnapshot, VirtualMachineSnapshotContent, VirtualMachineRestore) */
export const SNAPSHOT_GROUP = 'snapshot.kubevirt.io';

/** VirtualMachineExport (`export.kubevirt.io/v1`, the storage version), with `/status`. */
export const VM_EXPORTS = defineResource<VirtualMachineExport>({
  group: EXPORT_GROUP,
  version: 'v1',
  plural: 'virtualmachineexports',
  kind: 'VirtualMachineExport',
  namespaced: true,
  subresources: ['status'],
});

/** VirtualMachineSnapshot (`snapshot.kubevirt.io/v1beta1`), with `/status`. */
export const VM_SNAPSHOTS = defineResource<VirtualMachineSnapshot>({ group: SNAPSHOT_GROUP, version: 'v1beta1', plural: 'virtualmachinesnapshots', kind: 'VirtualMachineSnapshot', namespaced: true, subresources: ['status'] });

/** VirtualMachineSnapshotContent (`snapshot.kubevirt.io/v1beta1`), with `/status`. */
export const VM_SNAPSHOT_CONTENTS = defineResource<VirtualMachineSnapshotContent>({
  group: SNAPSHOT_GROUP,
  version: 'v1beta1',
  plural: 'virtualmachinesnapshotcontents',
  kind: 'VirtualMachineSnapshotContent',
  namespaced: true,
  subresources: ['status'],
});

export const VM_RESTORES = defineResource<VirtualMachineRestore>({ group: SNAPSHOT_GROUP, version: 'v1beta1', plural: 'virtualmachinerestores', kind: 'VirtualMachineRestore', namespaced: true, subresources: ['status'] });

/** `clone.kubevirt.io/v1beta1` VirtualMachineClone. */
export const VM_CLONES = defineResource<VirtualMachineClone>({ group: 'clone.kubevirt.io', version: 'v1beta1', plural: 'virtualmachineclones', kind: 'VirtualMachineClone', namespaced: true, subresources: ['status'] });

/** CSI `snapshot.storage.k8s.io/v1` VolumeSnapshot (namespaced) and VolumeSnapshotClass (cluster-scoped). */
export const VOLUME_SNAPSHOTS = defineResource<VolumeSnapshot>({ group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshots', kind: 'VolumeSnapshot', namespaced: true, subresources: ['status'] });

export const VOLUME_SNAPSHOT_CLASSES = defineResource<VolumeSnapshotClass>({ group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotclasses', kind: 'VolumeSnapshotClass', namespaced: false });

/** `storage.k8s.io/v1` StorageClass (cluster-scoped): provisioner and binding mode. */
export const STORAGE_CLASSES = defineResource<StorageClass>({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', kind: 'StorageClass', namespaced: false });

/**
 * CDI's StorageProfile (cluster-scoped): `status.snapshotClass` overrides the VolumeSnapshotClass
 * choice; `status.claimPropertySets` give the access modes a class supports (backend storage).
 */
export const STORAGE_PROFILES = defineResource<StorageProfileLike & { status?: { snapshotClass?: string } }>({ group: CDI_GROUP, version: 'v1beta1', plural: 'storageprofiles', kind: 'StorageProfile', namespaced: false, subresources: ['status'] });

/** `backup.kubevirt.io` (VirtualMachineBackup, VirtualMachineBackupTracker) */
export const BACKUP_GROUP = 'backup.kubevirt.io';

/** VirtualMachineBackup (`backup.kubevirt.io/v1alpha1`), with `/status`. */
export const VM_BACKUPS = defineResource<VirtualMachineBackup>({ group: BACKUP_GROUP, version: 'v1alpha1', plural: 'virtualmachinebackups', kind: 'VirtualMachineBackup', namespaced: true, subresources: ['status'] });

/** VirtualMachineBackupTracker (`backup.kubevirt.io/v1alpha1`), with `/status`. */
export const VM_BACKUP_TRACKERS = defineResource<VirtualMachineBackupTracker>({ group: BACKUP_GROUP, version: 'v1alpha1', plural: 'virtualmachinebackuptrackers', kind: 'VirtualMachineBackupTracker', namespaced: true, subresources: ['status'] });

/** `group/version` as written in `apiVersion` (`v1` for the core group). */
export function apiVersionOf(r: ResourceCoordinates): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** `plural.group` (`pods` for core), as Kubernetes names a resource in errors and RBAC. */
export function resourceName(r: ResourceCoordinates): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}
