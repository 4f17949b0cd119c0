/**
 * Strategic merge patch for the built-in kinds the sandbox serves. Lists named below merge by
 * their `patchMergeKey` (pod containers by name, ports by containerPort, conditions by type,
 * ownerReferences by uid…), `finalizers` merges as a set of strings; every other list is
 * replaced whole. Directives: `$patch: replace|delete|merge`, `$deleteFromPrimitiveList/<f>`,
 * `$setElementOrder/<f>`, `$retainKeys`. Keyed by field name rather than full type path: the
 * kinds served here never reuse one of these names with another merge key.
 */
import { clone, isObject } from './types.ts';

const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  addresses: 'type',
  podIPs: 'ip',
  resourceClaims: 'name',
  schedulingGates: 'name',
  readinessGates: 'conditionType',
};

const SET_LISTS = new Set(['finalizers']);

type Obj = Record<string, unknown>;

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (!isObject(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = strip(x);
  return out;
}

/** A new list: `target` (left as it is) with `patch` merged in by `key`. */
function mergeList(target: readonly unknown[], patch: unknown[], key: string): unknown[] {
  if (patch.some((p) => isObject(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isObject(p) && p.$patch === 'replace')).map(strip);
  }
  const out = [...target];
  for (const p of patch) {
    if (!isObject(p)) {
      out.push(p);
      continue;
    }
    const at = out.findIndex((t) => isObject(t) && t[key] === p[key]);
    if (p.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = mergeObject(out[at] as Obj, p);
    else out.push(strip(p));
  }
  return out;
}

function orderBy(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (x: unknown): unknown => (key && isObject(x) ? x[key] : x);
  const wanted = order.map(id);
  const ranked = list.filter((x) => wanted.includes(id(x))).sort((a, b) => wanted.indexOf(id(a)) - wanted.indexOf(id(b)));
  return [...ranked, ...list.filter((x) => !wanted.includes(id(x)))];
}

/** A new object: `target` (left as it is, or undefined) with `patch` merged in. */
function mergeObject(target: Obj | undefined, patch: Obj): Obj | undefined {
  if (patch.$patch === 'delete') return undefined;
  if (patch.$patch === 'replace') return strip(patch) as Obj;
  const out: Obj = isObject(target) ? { ...target } : {};
  if (Array.isArray(patch.$retainKeys)) {
    for (const k of Object.keys(out)) if (!patch.$retainKeys.includes(k)) delete out[k];
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = (out[field] as unknown[]).filter((x) => !v.includes(x));
      continue;
    }
    if (k.startsWith('$')) continue;
    if (v === null) delete out[k];
    else if (isObject(v)) {
      const merged = mergeObject(isObject(out[k]) ? (out[k] as Obj) : undefined, v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else if (Array.isArray(v)) {
      const cur = Array.isArray(out[k]) ? (out[k] as unknown[]) : [];
      const key = MERGE_KEYS[k];
      if (key) out[k] = mergeList(cur, v, key);
      else if (SET_LISTS.has(k)) out[k] = [...cur, ...v.filter((x) => !cur.includes(x))];
      else out[k] = strip(v);
    } else out[k] = v;
  }
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith('$setElementOrder/') || !Array.isArray(order)) continue;
    const field = k.slice('$setElementOrder/'.length);
    if (Array.isArray(out[field])) out[field] = orderBy(out[field] as unknown[], order, MERGE_KEYS[field]);
  }
  return out;
}

/**
 * Applies a strategic merge patch to `target` (an object) without changing it: the result is new
 * along the paths the patch names and shares every other subtree with `target`.
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  return mergeObject(isObject(target) ? target : {}, patch) ?? {};
}
