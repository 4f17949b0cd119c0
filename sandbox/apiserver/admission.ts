/**
 * Three of kube-apiserver's compiled-in admission plugins that change what a controller sees:
 *
 * - **Priority** (mutating): a new pod's `priorityClassName` resolves to the class's `value` and
 *   `preemptionPolicy` (`spec.priority`, `spec.preemptionPolicy`); an unknown class is a 403
 *   (`no PriorityClass with name <n> was found`), a contradicting `spec.priority` too; without a
 *   name the `globalDefault` class (lowest value) or priority 0, `PreemptLowerPriority`.
 * - **DefaultStorageClass** (mutating): a claim that names no class (no `spec.storageClassName`,
 *   no beta `volume.beta.kubernetes.io/storage-class` annotation; `""` counts as named) gets the
 *   default StorageClass — the newest one annotated `storageclass.kubernetes.io/is-default-class:
 *   "true"` (or the beta annotation), ties by name — and none when no class is default.
 * - **ResourceQuota** (validating), its constraint check: in a namespace whose quota limits
 *   `cpu`/`memory` (`requests.*`, `limits.*`), every container and init container of a new pod must
 *   state that resource, or the create is refused with the real server's 403
 *   (`pods "<name>" is forbidden: failed quota: <quota>: must specify limits.cpu for: <containers>`).
 *   The emulator runs no quota controller: a quota's `status.hard` when something wrote it, else
 *   its `spec.hard` (what the controller would write at once). Not emulated: usage accounting
 *   (the "exceeded quota" refusal), quota scopes (a quota with `scopes`/`scopeSelector` is
 *   skipped) and the "status unknown for quota" refusal.
 */
import type { Core, Scope } from './core.ts';
import { forbidden } from './errors.ts';
import { isObject, type KubeObject } from './types.ts';

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';
const BETA_CLAIM_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** The quota resources a pod's containers must each state (the evaluator's "validation set"). */
const MUST_STATE = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/** Mutating admission on a create, after the namespace check and before the strategy's defaults. */
export function admitCreate(core: Core, scope: Scope, obj: KubeObject): void {
  if (scope.res.group === '' && scope.res.resource === 'persistentvolumeclaims') defaultStorageClass(core, obj);
  if (scope.res.group === '' && scope.res.resource === 'pods') admitPriority(core, obj);
}

/** The classes every cluster has from its start (the API server creates them). */
export const SYSTEM_PRIORITY_CLASSES = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
] as const;

function podForbidden(pod: KubeObject, why: string) {
  const name = pod.metadata.name || pod.metadata.generateName || 'Unknown';
  return forbidden(`pods "${name}" is forbidden: ${why}`, { name, kind: 'pods' });
}

function admitPriority(core: Core, pod: KubeObject): void {
  const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
  const classes = core.registry.byPath('scheduling.k8s.io', 'v1', 'priorityclasses');
  if (!classes) return;
  let className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  let value = 0;
  let policy: unknown = 'PreemptLowerPriority';
  if (className) {
    const pc = core.store.peek(classes, undefined, className);
    if (!pc) throw podForbidden(pod, `no PriorityClass with name ${className} was found`);
    value = Number(pc.value ?? 0);
    policy = pc.preemptionPolicy;
  } else {
    const def = core.store.scan(classes).filter((c) => c.globalDefault === true).sort((a, b) => Number(a.value) - Number(b.value))[0];
    if (def) [className, value, policy] = [def.metadata.name!, Number(def.value ?? 0), def.preemptionPolicy];
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== value) {
    throw podForbidden(pod, `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`);
  }
  if (typeof policy === 'string' && spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== policy) {
    throw podForbidden(pod, `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
  }
  if (className) spec.priorityClassName = className;
  spec.priority = value;
  if (typeof policy === 'string') spec.preemptionPolicy = policy;
}

/** Validating admission on a create, once the object is named and defaulted (dry runs included). */
export function validateCreate(core: Core, scope: Scope, obj: KubeObject): void {
  if (scope.res.group === '' && scope.res.resource === 'pods' && scope.namespace) checkQuotaConstraints(core, scope.namespace, obj);
}

function defaultStorageClass(core: Core, claim: KubeObject): void {
  const spec = isObject(claim.spec) ? claim.spec : (claim.spec = {});
  if (spec.storageClassName !== undefined && spec.storageClassName !== null) return;
  if (claim.metadata.annotations?.[BETA_CLAIM_CLASS] !== undefined) return;
  const classes = core.registry.byPath('storage.k8s.io', 'v1', 'storageclasses');
  if (!classes) return;
  const defaults = core.store
    .scan(classes)
    .filter((c) => c.metadata.annotations?.[DEFAULT_CLASS] === 'true' || c.metadata.annotations?.[BETA_DEFAULT_CLASS] === 'true')
    // Newest first (upstream's choice since 1.26 when several are default), then by name.
    .sort((a, b) => Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '') || (a.metadata.name! < b.metadata.name! ? -1 : 1));
  if (defaults[0]) spec.storageClassName = defaults[0].metadata.name;
}

/** Which of {@link MUST_STATE} a container states, as the pod evaluator counts its usage. */
function stated(container: Record<string, unknown>): Set<string> {
  const resources = isObject(container.resources) ? container.resources : {};
  const requests = isObject(resources.requests) ? resources.requests : {};
  const limits = isObject(resources.limits) ? resources.limits : {};
  const out = new Set<string>();
  for (const r of ['cpu', 'memory']) {
    if (requests[r] !== undefined) out.add(r).add(`requests.${r}`);
    if (limits[r] !== undefined) out.add(`limits.${r}`);
  }
  return out;
}

function checkQuotaConstraints(core: Core, namespace: string, pod: KubeObject): void {
  const quotas = core.registry.byPath('', 'v1', 'resourcequotas');
  if (!quotas) return;
  const spec = isObject(pod.spec) ? pod.spec : {};
  // Pod-level resources (on by default since 1.34) lift the per-container requirement.
  if (isObject(spec.resources) && Object.keys(spec.resources).length > 0) return;
  const containers = [...((spec.containers as unknown[]) ?? []), ...((spec.initContainers as unknown[]) ?? [])].filter(isObject);
  // Quotas in name order: the real plugin checks them as its lister returns them.
  const list = core.store.scan(quotas, namespace).sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  for (const quota of list) {
    const qspec = isObject(quota.spec) ? quota.spec : {};
    if ((Array.isArray(qspec.scopes) && qspec.scopes.length > 0) || isObject(qspec.scopeSelector)) continue;
    const status = isObject(quota.status) ? quota.status : {};
    const hard = isObject(status.hard) ? status.hard : isObject(qspec.hard) ? qspec.hard : {};
    const required = MUST_STATE.filter((r) => hard[r] !== undefined);
    if (required.length === 0) continue;
    const missing = new Map<string, string[]>();
    for (const c of containers) {
      const has = stated(c);
      for (const r of required) if (!has.has(r)) missing.set(r, [...(missing.get(r) ?? []), String(c.name)]);
    }
    if (missing.size === 0) continue;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...new Set(missing.get(r))].sort().join(',')}`);
    throw podForbidden(pod, `failed quota: ${quota.metadata.name}: must specify ${parts.join('; ')}`);
  }
}
