/**
 * The resource registry: every kind the emulator serves, with the facts routing, discovery,
 * storage, tables, OpenAPI and selectors need. Built-in kinds are listed here; custom resources
 * come from the CRD files in `infra/crds/` (see crds.ts), one entry per served version.
 */
import { loadCrds, type CrdInfo, type PrinterColumn, type ScaleSubresource } from './crds.ts';

export type { PrinterColumn, ScaleSubresource } from './crds.ts';

/** One served resource at one version. */
export interface ResourceInfo {
  group: string;
  version: string;
  /** Plural, lower case: the URL segment. */
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  /** Has a `/status` subresource with the status-only write rules. */
  status: boolean;
  /** A compiled-in Kubernetes type (strategic merge patch allowed, list items without kind). */
  builtin: boolean;
  /** This version is the one objects are stored at (one per group/resource). */
  storage: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Extra field-selector labels besides metadata.name / metadata.namespace. */
  selectableFields?: string[];
  /** Extra subresources served besides status and scale (listed in discovery). */
  subresources?: string[];
  /** `/scale`: where replicas and the selector live. */
  scale?: ScaleSubresource;
  /** A CRD's printer columns (built-ins print through printers.ts). */
  columns?: PrinterColumn[];
  /** The OpenAPI definition name of the kind, e.g. `io.k8s.api.core.v1.Pod`. */
  schemaName: string;
  deprecationWarning?: string;
}

const POD_FIELDS = ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'];
const REPLICAS: ScaleSubresource = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' };

/** The Go package path a built-in group's types live in, as upstream names its definitions. */
function builtinPackage(group: string): string {
  if (group === '') return 'io.k8s.api.core';
  const short = group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '').replace(/\.apiserver$/, '');
  return `io.k8s.api.${short}`;
}

function b(group: string, version: string, resource: string, kind: string, namespaced: boolean, status: boolean, extra: Partial<ResourceInfo> = {}): ResourceInfo {
  return { group, version, resource, kind, listKind: `${kind}List`, singular: kind.toLowerCase(), namespaced, status, builtin: true, storage: true, schemaName: `${builtinPackage(group)}.${version}.${kind}`, ...extra };
}

/** The built-in resources the sandbox cluster serves (custom resources come from the CRDs). */
export const BUILTIN_RESOURCES: readonly ResourceInfo[] = [
  b('', 'v1', 'pods', 'Pod', true, true, { shortNames: ['po'], categories: ['all'], selectableFields: POD_FIELDS, subresources: ['binding', 'eviction', 'log'] }),
  b('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, true, { shortNames: ['pvc'] }),
  b('', 'v1', 'persistentvolumes', 'PersistentVolume', false, true, { shortNames: ['pv'] }),
  b('', 'v1', 'nodes', 'Node', false, true, { shortNames: ['no'], selectableFields: ['spec.unschedulable'] }),
  b('', 'v1', 'namespaces', 'Namespace', false, true, { shortNames: ['ns'], selectableFields: ['status.phase'], subresources: ['finalize'] }),
  b('', 'v1', 'events', 'Event', true, false, { shortNames: ['ev'], selectableFields: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'] }),
  b('', 'v1', 'configmaps', 'ConfigMap', true, false, { shortNames: ['cm'] }),
  b('', 'v1', 'secrets', 'Secret', true, false, { selectableFields: ['type'] }),
  b('', 'v1', 'serviceaccounts', 'ServiceAccount', true, false, { shortNames: ['sa'] }),
  b('', 'v1', 'services', 'Service', true, true, { shortNames: ['svc'], categories: ['all'] }),
  b('', 'v1', 'endpoints', 'Endpoints', true, false, { shortNames: ['ep'] }),
  b('', 'v1', 'resourcequotas', 'ResourceQuota', true, true, { shortNames: ['quota'] }),
  b('', 'v1', 'limitranges', 'LimitRange', true, false, { shortNames: ['limits'] }),
  b('coordination.k8s.io', 'v1', 'leases', 'Lease', true, false),
  b('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, false),
  b('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, false),
  b('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, false),
  b('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, false),
  b('apps', 'v1', 'deployments', 'Deployment', true, true, { shortNames: ['deploy'], categories: ['all'], scale: REPLICAS }),
  b('apps', 'v1', 'replicasets', 'ReplicaSet', true, true, { shortNames: ['rs'], categories: ['all'], scale: REPLICAS }),
  b('apps', 'v1', 'statefulsets', 'StatefulSet', true, true, { shortNames: ['sts'], categories: ['all'], scale: REPLICAS }),
  b('apps', 'v1', 'daemonsets', 'DaemonSet', true, true, { shortNames: ['ds'], categories: ['all'] }),
  b('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true, false),
  b('batch', 'v1', 'jobs', 'Job', true, true, { categories: ['all'] }),
  b('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, true, { shortNames: ['pdb'] }),
  b('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false, false, { shortNames: ['sc'] }),
  b('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false, false, { shortNames: ['pc'] }),
  b('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, true, { shortNames: ['ing'] }),
  // KubeVirt's virt-controller lists and watches CRDs before it starts (it waits for optional ones).
  b('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, true, { shortNames: ['crd', 'crds'], categories: ['api-extensions'], schemaName: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition' }),
  b('events.k8s.io', 'v1', 'events', 'Event', true, false, { shortNames: ['ev'] }),
  b('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', false, true),
  b('flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, true),
];

/** `io.kubevirt.v1.VirtualMachineInstance`: the name the real server gives a CRD's definition. */
export function crdSchemaName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** One ResourceInfo per served version of a CRD. */
export function crdResources(crd: CrdInfo): ResourceInfo[] {
  return crd.versions.map((v) => {
    const res: ResourceInfo = { group: crd.group, version: v.name, resource: crd.plural, kind: crd.kind, listKind: crd.listKind, singular: crd.singular, namespaced: crd.namespaced, status: v.status, builtin: false, storage: v.storage, columns: v.columns, schemaName: crdSchemaName(crd.group, v.name, crd.kind) };
    if (crd.shortNames.length > 0) res.shortNames = crd.shortNames;
    if (crd.categories.length > 0) res.categories = crd.categories;
    if (v.scale) res.scale = v.scale;
    if (v.deprecationWarning) res.deprecationWarning = v.deprecationWarning;
    return res;
  });
}

/** Every resource the sandbox serves: the built-ins, then every CRD in `infra/crds/`. */
export function allResources(crds: readonly CrdInfo[] = loadCrds()): ResourceInfo[] {
  return [...BUILTIN_RESOURCES, ...crds.flatMap(crdResources)];
}

/** `group/resource`: the storage key of a resource (versions share storage). */
export function resourceKey(res: Pick<ResourceInfo, 'group' | 'resource'>): string {
  return `${res.group}/${res.resource}`;
}

/** `v1` or `kubevirt.io/v1`. */
export function apiVersionOf(res: Pick<ResourceInfo, 'group' | 'version'>): string {
  return res.group ? `${res.group}/${res.version}` : res.version;
}

/** Lookups over the served resources. */
export class ResourceRegistry {
  /** Every served resource version, in discovery order. */
  readonly all: readonly ResourceInfo[];
  /** One entry per group/resource: the storage version (what background controllers scan). */
  readonly stored: readonly ResourceInfo[];
  constructor(resources: readonly ResourceInfo[] = allResources()) {
    this.all = resources;
    this.stored = resources.filter((r) => r.storage);
  }

  /** The resource served at `/api(s)/{group}/{version}/{plural}`. */
  byPath(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.all.find((x) => x.group === group && x.version === version && x.resource === resource);
  }

  /** The resource for an ownerReference / object `apiVersion` + `kind` (that version if served). */
  byKind(apiVersion: string, kind: string): ResourceInfo | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const all = this.all.filter((x) => x.group === group && x.kind === kind);
    return all.find((x) => x.version === version) ?? all[0];
  }

  /** Group versions in discovery order. */
  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const x of this.all) seen.set(`${x.group}/${x.version}`, { group: x.group, version: x.version });
    return [...seen.values()];
  }
}
