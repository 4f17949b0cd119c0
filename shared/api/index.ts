/**
 * The API types and resource coordinates the reconciler uses.
 *
 * ```ts
 * import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from './index.ts';
 * import { VMIS, apiVersionOf } from './index.ts';
 * ```
 *
 * Every KubeVirt type is generated from KubeVirt's OpenAPI spec into `kubevirt.gen.ts` under its Go
 * name without the package (`VirtualMachineInstanceSpec`, `Disk`, `Interface`, `ObjectMeta`,
 * `Toleration`…) and re-exported here. Kubernetes core objects that KubeVirt's spec does not
 * describe (Pod, PVC, Event) come from `@kubernetes/client-node` (`V1Pod`…); the generated core
 * pieces (`Affinity`, `Toleration`, `ObjectMeta`…) have the same shape with string timestamps.
 */
export type * from './kubevirt.gen.ts';
export type { DataVolume, DataVolumeCondition, DataVolumePhase, DataVolumeStatus } from './data-volume.ts';
export type { MigrationPhase, VirtualMachineInstancePhase, VirtualMachinePrintableStatus } from './phases.ts';
export { MIGRATION_FINAL_PHASES, VMI_FINAL_PHASES } from './phases.ts';
export type { CoordinationLease, Resource, ResourceCoordinates, Subresource } from './resources.ts';
export {
  CDI_GROUP,
  CONFIG_MAPS,
  CONTROLLER_REVISIONS,
  DAEMON_SETS,
  JOBS,
  LEASES,
  DATA_VOLUMES,
  defineResource,
  EVENTS,
  KUBEVIRTS,
  KUBEVIRT_GROUP,
  MIGRATIONS,
  MIGRATIONS_GROUP,
  MIGRATION_POLICIES,
  NAMESPACES,
  NODES,
  PDBS,
  PODS,
  POOL_GROUP,
  PVCS,
  SECRETS,
  VM_POOLS,
  VMI_REPLICA_SETS,
  VMIS,
  VMS,
  apiVersionOf,
  resourceName,
} from './resources.ts';

import type {
  KubeVirt,
  KubeVirtConfiguration,
  V1beta1DataVolumeSource,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
} from './kubevirt.gen.ts';

/** Friendlier aliases for names people reach for. */
export type VMI = VirtualMachineInstance;
export type VM = VirtualMachine;
export type Migration = VirtualMachineInstanceMigration;
/** The KubeVirt CR's `spec.configuration`, i.e. the cluster config the template service reads. */
export type ClusterConfiguration = KubeVirtConfiguration;
/** CDI's source of a DataVolume (import, clone, upload…); `DataVolumeSource` is KubeVirt's volume-by-DV reference. */
export type CdiDataVolumeSource = V1beta1DataVolumeSource;
/** Any of the custom resources above. */
export type KubeVirtObject = VirtualMachineInstance | VirtualMachine | VirtualMachineInstanceMigration | KubeVirt;
