/**
 * The resource registry: every kind the emulator serves, with the facts routing, discovery,
 * storage and selectors need (scope, plural, kind, list kind, status subresource, built-in or
 * custom — built-ins accept strategic merge patch and omit apiVersion/kind on list items).
 */

/** One served resource. */
export interface ResourceInfo {
  group: string;
  version: string;
  /** Plural, lower case: the URL segment. */
  resource: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  /** Has a `/status` subresource with the status-only write rules. */
  status: boolean;
  /** A compiled-in Kubernetes type (strategic merge patch allowed, list items without kind). */
  builtin: boolean;
  shortNames?: string[];
  /** Extra field-selector labels besides metadata.name / metadata.namespace. */
  selectableFields?: string[];
  /** Extra subresources served besides status (listed in discovery). */
  subresources?: string[];
}

const POD_FIELDS = ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'];

function r(group: string, version: string, resource: string, kind: string, namespaced: boolean, status: boolean, extra: Partial<ResourceInfo> = {}): ResourceInfo {
  const builtin = !group.endsWith('kubevirt.io');
  return { group, version, resource, kind, singular: kind.toLowerCase(), namespaced, status, builtin, ...extra };
}

/** The resources the sandbox cluster serves. */
export const RESOURCES: readonly ResourceInfo[] = [
  r('', 'v1', 'pods', 'Pod', true, true, { shortNames: ['po'], selectableFields: POD_FIELDS, subresources: ['binding'] }),
  r('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, true, { shortNames: ['pvc'] }),
  r('', 'v1', 'nodes', 'Node', false, true, { shortNames: ['no'], selectableFields: ['spec.unschedulable'] }),
  r('', 'v1', 'namespaces', 'Namespace', false, true, { shortNames: ['ns'], selectableFields: ['status.phase'], subresources: ['finalize'] }),
  r('', 'v1', 'events', 'Event', true, false, { shortNames: ['ev'], selectableFields: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'] }),
  r('', 'v1', 'configmaps', 'ConfigMap', true, false, { shortNames: ['cm'] }),
  r('', 'v1', 'secrets', 'Secret', true, false, { selectableFields: ['type'] }),
  r('', 'v1', 'serviceaccounts', 'ServiceAccount', true, false, { shortNames: ['sa'] }),
  r('', 'v1', 'services', 'Service', true, true, { shortNames: ['svc'] }),
  r('kubevirt.io', 'v1', 'virtualmachines', 'VirtualMachine', true, true, { shortNames: ['vm', 'vms'] }),
  // KubeVirt's VMI CRD declares no status subresource: virt-controller and virt-handler write
  // status, labels and finalizers in one update or patch of the main resource.
  r('kubevirt.io', 'v1', 'virtualmachineinstances', 'VirtualMachineInstance', true, false, { shortNames: ['vmi', 'vmis'] }),
  r('kubevirt.io', 'v1', 'virtualmachineinstancemigrations', 'VirtualMachineInstanceMigration', true, true, { shortNames: ['vmim'] }),
  r('kubevirt.io', 'v1', 'kubevirts', 'KubeVirt', true, true, { shortNames: ['kv', 'kvs'] }),
  r('migrations.kubevirt.io', 'v1alpha1', 'migrationpolicies', 'MigrationPolicy', false, true),
  r('cdi.kubevirt.io', 'v1beta1', 'datavolumes', 'DataVolume', true, true, { shortNames: ['dv', 'dvs'] }),
  r('coordination.k8s.io', 'v1', 'leases', 'Lease', true, false),
  r('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, false),
  r('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, false),
  r('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, false),
  r('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, false),
  r('apps', 'v1', 'deployments', 'Deployment', true, true, { shortNames: ['deploy'] }),
  r('apps', 'v1', 'daemonsets', 'DaemonSet', true, true, { shortNames: ['ds'] }),
  r('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, true, { shortNames: ['pdb'] }),
  r('events.k8s.io', 'v1', 'events', 'Event', true, false, { shortNames: ['ev'] }),
  r('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', false, true),
  r('flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, true),
];

/** `group/resource`: the storage key of a resource (versions share storage). */
export function resourceKey(res: Pick<ResourceInfo, 'group' | 'resource'>): string {
  return `${res.group}/${res.resource}`;
}

/** `v1` or `kubevirt.io/v1`. */
export function apiVersionOf(res: Pick<ResourceInfo, 'group' | 'version'>): string {
  return res.group ? `${res.group}/${res.version}` : res.version;
}

/** Lookups over {@link RESOURCES}. */
export class ResourceRegistry {
  readonly all: readonly ResourceInfo[];
  constructor(resources: readonly ResourceInfo[] = RESOURCES) {
    this.all = resources;
  }

  /** The resource served at `/api(s)/{group}/{version}/{plural}`. */
  byPath(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.all.find((x) => x.group === group && x.version === version && x.resource === resource);
  }

  /** The resource for an ownerReference / object `apiVersion` + `kind`. */
  byKind(apiVersion: string, kind: string): ResourceInfo | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    return this.all.find((x) => x.group === group && x.kind === kind);
  }

  /** Group versions in discovery order. */
  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const x of this.all) seen.set(`${x.group}/${x.version}`, { group: x.group, version: x.version });
    return [...seen.values()];
  }
}
