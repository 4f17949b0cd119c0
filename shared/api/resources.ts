/**
 * Coordinates of the resources the reconciler reads and writes: API group, version, plural (the
 * URL segment), kind, and whether it is namespaced. One table, so URLs, RBAC, watches and call
 * counters all spell a resource the same way.
 */

/** Where a resource lives in the API. `group` is `''` for the core group (`/api/v1`). */
export interface ResourceCoordinates {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** `kubevirt.io` */
export const KUBEVIRT_GROUP = 'kubevirt.io';
/** `migrations.kubevirt.io` (MigrationPolicy) */
export const MIGRATIONS_GROUP = 'migrations.kubevirt.io';
/** `cdi.kubevirt.io` (DataVolume) */
export const CDI_GROUP = 'cdi.kubevirt.io';

export const VMIS = {
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachineinstances',
  kind: 'VirtualMachineInstance',
  namespaced: true,
} as const satisfies ResourceCoordinates;

export const VMS = {
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachines',
  kind: 'VirtualMachine',
  namespaced: true,
} as const satisfies ResourceCoordinates;

export const MIGRATIONS = {
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'virtualmachineinstancemigrations',
  kind: 'VirtualMachineInstanceMigration',
  namespaced: true,
} as const satisfies ResourceCoordinates;

export const KUBEVIRTS = {
  group: KUBEVIRT_GROUP,
  version: 'v1',
  plural: 'kubevirts',
  kind: 'KubeVirt',
  namespaced: true,
} as const satisfies ResourceCoordinates;

/** Cluster-scoped. */
export const MIGRATION_POLICIES = {
  group: MIGRATIONS_GROUP,
  version: 'v1alpha1',
  plural: 'migrationpolicies',
  kind: 'MigrationPolicy',
  namespaced: false,
} as const satisfies ResourceCoordinates;

export const DATA_VOLUMES = {
  group: CDI_GROUP,
  version: 'v1beta1',
  plural: 'datavolumes',
  kind: 'DataVolume',
  namespaced: true,
} as const satisfies ResourceCoordinates;

export const PODS = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true } as const satisfies ResourceCoordinates;

export const PVCS = {
  group: '',
  version: 'v1',
  plural: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  namespaced: true,
} as const satisfies ResourceCoordinates;

export const EVENTS = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true } as const satisfies ResourceCoordinates;

/** `group/version` as written in `apiVersion` (`v1` for the core group). */
export function apiVersionOf(r: ResourceCoordinates): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** `plural.group` (`pods` for core), as Kubernetes names a resource in errors and RBAC. */
export function resourceName(r: ResourceCoordinates): string {
  return r.group ? `${r.plural}.${r.group}` : r.plural;
}
