/**
 * PodDisruptionBudget status, as kube-controller-manager's disruption controller keeps it:
 * `expectedPods`, `currentHealthy` (selected pods that are Ready and not being deleted),
 * `desiredHealthy` (from minAvailable / maxUnavailable, integers or percentages),
 * `disruptionsAllowed`, the `DisruptionAllowed` condition and `observedGeneration`. The eviction
 * path syncs a namespace's budgets before it decides, so a drain right after pods turn Ready
 * sees the same numbers a settled controller would; after that, changes are picked up
 * asynchronously like any controller's.
 *
 * Expected pods: with an integer minAvailable, the selected pods; otherwise the replicas of the
 * pods' controllers (anything with `/scale`), a controller-less pod counting as one.
 */
import type { Core, Scope } from './core.ts';
import { resourceKey } from './resources.ts';
import { selectorObjectMatches } from './selectors.ts';
import { clone, isObject, jsonEqual, type KubeObject } from './types.ts';
import { commitUpdate } from './writes.ts';

/** Who writes PDB status. */
export const DISRUPTION_CONTROLLER_IDENTITY = 'system:serviceaccount:kube-system:disruption-controller';

function podsRes(core: Core) {
  return core.registry.byPath('', 'v1', 'pods')!;
}
function pdbRes(core: Core) {
  return core.registry.byPath('policy', 'v1', 'poddisruptionbudgets')!;
}

/** The budgets whose selector selects `pod`. */
export function budgetsFor(core: Core, pod: KubeObject): KubeObject[] {
  return core.store.scan(pdbRes(core), pod.metadata.namespace).filter((b) => selectorObjectMatches(isObject(b.spec) ? b.spec.selector : undefined, pod.metadata.labels));
}

function isHealthy(pod: KubeObject): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  const conditions = isObject(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  return conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

/** `3` or `"50%"` of `total`, rounding up as upstream's GetScaledValueFromIntOrPercent(…, true). */
function scaled(v: unknown, total: number): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
  return m ? Math.ceil((Number(m[1]) * total) / 100) : Number(v) || 0;
}

function expectedCount(core: Core, pods: KubeObject[], spec: Record<string, unknown>): number {
  if (typeof spec.minAvailable === 'number') return pods.length;
  const owners = new Map<string, number>();
  let loose = 0;
  for (const p of pods) {
    const ref = p.metadata.ownerReferences?.find((r) => r.controller);
    const res = ref && core.registry.byKind(ref.apiVersion, ref.kind);
    const owner = res && ref ? core.store.peek(res, p.metadata.namespace, ref.name) : undefined;
    if (!res?.scale || !owner || owner.metadata.uid !== ref!.uid) {
      loose++;
      continue;
    }
    const replicas = isObject(owner.spec) && typeof owner.spec.replicas === 'number' ? owner.spec.replicas : 1;
    owners.set(owner.metadata.uid!, replicas);
  }
  return loose + [...owners.values()].reduce((a, b) => a + b, 0);
}

/** The status a budget should have now. */
function desiredStatus(core: Core, pdb: KubeObject): Record<string, unknown> {
  const spec = isObject(pdb.spec) ? pdb.spec : {};
  const pods = core.store.scan(podsRes(core), pdb.metadata.namespace).filter((p) => selectorObjectMatches(spec.selector, p.metadata.labels));
  const expected = expectedCount(core, pods, spec);
  const currentHealthy = pods.filter(isHealthy).length;
  let desiredHealthy: number;
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) desiredHealthy = Math.max(0, expected - scaled(spec.maxUnavailable, expected));
  else desiredHealthy = scaled(spec.minAvailable ?? 1, expected);
  const allowed = expected <= 0 ? 0 : Math.max(0, currentHealthy - desiredHealthy);
  const old = isObject(pdb.status) ? pdb.status : {};
  const oldCond = (Array.isArray(old.conditions) ? old.conditions : []).find((c) => isObject(c) && c.type === 'DisruptionAllowed') as Record<string, unknown> | undefined;
  const condStatus = allowed > 0 ? 'True' : 'False';
  const reason = allowed > 0 ? 'SufficientPods' : 'InsufficientPods';
  const condition = oldCond && oldCond.status === condStatus && oldCond.reason === reason ? oldCond : { type: 'DisruptionAllowed', status: condStatus, reason, message: '', observedGeneration: pdb.metadata.generation ?? 1, lastTransitionTime: core.clock.isoNow().replace(/\.\d+Z$/, 'Z') };
  return { ...old, observedGeneration: pdb.metadata.generation ?? 1, expectedPods: expected, currentHealthy, desiredHealthy, disruptionsAllowed: allowed, conditions: [{ ...condition, observedGeneration: pdb.metadata.generation ?? 1 }] };
}

/** Brings every budget of `namespace` up to date (writes only what changed). */
export function syncBudgets(core: Core, namespace: string): void {
  const res = pdbRes(core);
  const scope: Scope = { res, namespace, identity: DISRUPTION_CONTROLLER_IDENTITY, dryRun: false };
  for (const pdb of core.store.scan(res, namespace)) {
    if (pdb.metadata.deletionTimestamp) continue;
    const status = desiredStatus(core, pdb);
    if (jsonEqual(status, pdb.status)) continue;
    commitUpdate(core, scope, pdb, { ...clone(pdb), status }, 'update', 'status');
  }
}

/** Re-syncs the budgets of namespaces whose pods or budgets changed, one turn later. */
export function startDisruptionController(core: Core): () => void {
  const pending = new Set<string>();
  const watched = new Set([resourceKey(podsRes(core)), resourceKey(pdbRes(core))]);
  return core.store.subscribe((e) => {
    if (!watched.has(resourceKey(e.res)) || !e.object.metadata.namespace || e.ctx.identity === DISRUPTION_CONTROLLER_IDENTITY) return;
    if (pending.size === 0) {
      setImmediate(() => {
        const namespaces = [...pending];
        pending.clear();
        for (const ns of namespaces) syncBudgets(core, ns);
      });
    }
    pending.add(e.object.metadata.namespace);
  });
}
