/**
 * The few shapes the simulated node side reads, as plain JSON (what the API server sends on the
 * wire). Only the fields the scheduler, kubelet and virt-handler look at are declared; everything
 * else passes through untouched because we never write whole objects back — only patches.
 */

/** Labels, annotations, node selectors. */
export type StringMap = Record<string, string>;

export interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: StringMap;
  annotations?: StringMap;
  ownerReferences?: OwnerReference[];
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: StringMap;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface NodeSelectorTerm {
  matchExpressions?: LabelSelectorRequirement[];
  matchFields?: LabelSelectorRequirement[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  namespaceSelector?: LabelSelector;
  topologyKey: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface ResourceRequirements {
  requests?: StringMap;
  limits?: StringMap;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
  resources?: ResourceRequirements;
}

export interface ContainerStatus {
  name: string;
  ready?: boolean;
  state?: { running?: object; terminated?: { exitCode?: number; reason?: string }; waiting?: object };
}

export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    schedulerName?: string;
    nodeSelector?: StringMap;
    tolerations?: Toleration[];
    affinity?: {
      nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
      podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
      podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
    };
    containers?: Container[];
    initContainers?: Container[];
    overhead?: StringMap;
    readinessGates?: { conditionType: string }[];
    terminationGracePeriodSeconds?: number;
    volumes?: { name?: string; persistentVolumeClaim?: { claimName?: string } }[];
  };
  status?: {
    phase?: string;
    conditions?: Condition[];
    podIP?: string;
    containerStatuses?: ContainerStatus[];
  };
}

export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: Taint[] };
  status?: {
    capacity?: StringMap;
    allocatable?: StringMap;
    conditions?: Condition[];
    addresses?: { type: string; address: string }[];
  };
}

/** `vmi.status.migrationState`, as far as the handler reads and writes it. */
export interface MigrationState {
  migrationUid?: string;
  targetNode?: string;
  sourceNode?: string;
  targetPod?: string;
  sourcePod?: string;
  targetNodeAddress?: string;
  startTimestamp?: string;
  endTimestamp?: string;
  completed?: boolean;
  failed?: boolean;
  abortRequested?: boolean;
  failureReason?: string;
  sourcePersistentStatePVCName?: string;
  targetPersistentStatePVCName?: string;
  [field: string]: unknown;
}

export interface Vmi extends KubeObject {
  spec?: {
    domain?: {
      machine?: { type?: string };
      memory?: { guest?: string };
      resources?: ResourceRequirements;
      cpu?: { sockets?: number; cores?: number; threads?: number };
      devices?: { interfaces?: { name: string; macAddress?: string; state?: string; [binding: string]: unknown }[] };
    };
    volumes?: { name: string; [source: string]: unknown }[];
  };
  status?: {
    phase?: string;
    nodeName?: string;
    conditions?: Condition[];
    migrationState?: MigrationState;
    interfaces?: unknown[];
    [field: string]: unknown;
  };
}

/** `namespace/name` (or `name` for cluster-scoped objects): the work-queue key. */
export function keyOf(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** Splits a {@link keyOf} key. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Epoch ms of an RFC 3339 timestamp, or undefined. */
export function timeMs(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : t;
}

/** RFC 3339, second precision, `Z` — how the API writes timestamps. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Pod phases after which nothing runs any more. */
export function isTerminalPhase(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The controller owner reference, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** Finds a condition by type. */
/**
 * A VMI condition as virt-handler (Go) writes it: KubeVirt's VirtualMachineInstanceCondition
 * marshalled — `lastProbeTime` and `lastTransitionTime` always there (`null` when unset: a
 * metav1.Time is a struct, which `omitempty` never drops), `reason` and `message` only when not
 * empty. A condition written otherwise (`{type, status}` alone) is one KubeVirt's own virt-controller
 * cannot patch: its JSON-patch `test` of `/status/conditions` carries the nulls, and kube-apiserver
 * tells a missing key from a null one.
 */
export function goVmiCondition(c: Condition): Condition {
  return {
    type: c.type,
    status: c.status,
    lastProbeTime: c.lastProbeTime ?? null,
    lastTransitionTime: (c.lastTransitionTime ?? null) as string,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
}

export function conditionOf(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

/**
 * Returns `conds` with `next` put in place of the condition of the same type, keeping
 * `lastTransitionTime` when the status did not change (as Kubernetes components do).
 */
export function withCondition(conds: Condition[] | undefined, next: Condition): Condition[] {
  const list = (conds ?? []).filter((c) => c.type !== next.type);
  const old = conditionOf(conds, next.type);
  const merged = old && old.status === next.status && old.lastTransitionTime ? { ...next, lastTransitionTime: old.lastTransitionTime } : next;
  return [...list, merged];
}
