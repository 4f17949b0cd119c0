/**
 * A shadow decision: what one dry-run write would have made of its object, and how that is held
 * against the object as the live controller left it (docs/cutover.md, "How a decision is judged").
 *
 * - a create or an update: the fields it sets (for a create, from the dry run's answer, so defaults
 *   and admission are on both sides) — metadata's labels, annotations, owners and finalizers, and
 *   every top-level field but status (for an update of /status: the status);
 * - a merge or strategic patch (a scale too): the fields of the patch, `null` meaning "absent";
 *   lists of a strategic patch must each be matched by an item of the live list;
 * - a JSON patch: each add/replace at its path, each remove as "absent", appends as "contained";
 * - a delete or an eviction: the object gone or terminating.
 *
 * Fields not in the decision are not compared: another component (the scheduler, virt-handler)
 * may own them. Both sides are normalised first (normalise.ts).
 */
import type { Resource } from '../api/resources.ts';
import type { ShadowWrite } from '../kube/guarded-writes.ts';
import { jsonEqual, normalise } from './normalise.ts';

/** One differing field: its path, what we would have written, what the live object has. */
export interface FieldDiff {
  readonly path: string;
  readonly ours: unknown;
  readonly live: unknown;
}

/** What a decision expects of its object. */
export type Expectation =
  | { readonly kind: 'fields'; readonly expect: Record<string, unknown>; readonly absent: readonly string[][]; readonly contained: readonly { path: string[]; item: unknown }[]; readonly lists: 'whole' | 'contain' }
  | { readonly kind: 'gone' };

/** The object a decision is about. */
export interface Target {
  readonly resource: Resource;
  readonly kind: string;
  readonly plural: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly generateName: string | undefined;
}

export interface Decision {
  readonly target: Target;
  readonly expectation: Expectation;
  /** `create pods`, `patch virtualmachineinstances/status`… */
  readonly write: string;
}

/** `Pod default/virt-launcher-vmi-a-*`, `VirtualMachineInstance default/vmi-a`: a target as logs and divergences name it. */
export function describeTarget(t: Target): string {
  return `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name ?? `${t.generateName ?? ''}*`}`;
}

const META_FIELDS = ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The decision a dry-run write stands for; undefined for what is not compared (Events, refused writes). */
export function decisionOf(w: ShadowWrite): Decision | undefined {
  if (w.resource.plural === 'events') return undefined;
  // A write the API server refused would not have changed anything: nothing to compare.
  if ('error' in w.answer) return undefined;
  const write = `${w.verb} ${w.resource.plural}${w.subresource ? `/${w.subresource}` : ''}`;
  const answered = isObj(w.answer.result) ? (w.answer.result as Obj & { metadata?: { name?: string } }) : undefined;
  const target: Target = {
    resource: w.resource,
    kind: w.resource.kind,
    plural: w.resource.plural,
    namespace: w.namespace,
    name: w.generateName ? undefined : (w.name ?? answered?.metadata?.name),
    generateName: w.generateName,
  };
  if (w.verb === 'delete' || w.subresource === 'eviction') return { target, write, expectation: { kind: 'gone' } };
  if (w.verb === 'create' || w.verb === 'update') {
    const obj = (w.verb === 'create' && answered ? answered : w.body) as Obj;
    return { target, write, expectation: fields(w.subresource === 'status' ? { status: obj.status } : objectFields(obj), 'whole') };
  }
  if (w.patchType === 'json') return { target, write, expectation: jsonPatchFields(w.body as { op: string; path: string; value?: unknown }[]) };
  return { target, write, expectation: fields(w.body as Obj, w.patchType === 'strategic' ? 'contain' : 'whole') };
}

function objectFields(obj: Obj): Obj {
  const out: Obj = {};
  const meta = (obj.metadata ?? {}) as Obj;
  const m: Obj = {};
  for (const f of META_FIELDS) if (meta[f] !== undefined) m[f] = meta[f];
  if (Object.keys(m).length) out.metadata = m;
  for (const [k, v] of Object.entries(obj)) if (!['apiVersion', 'kind', 'metadata', 'status'].includes(k)) out[k] = v;
  return out;
}

function fields(body: Obj, lists: 'whole' | 'contain'): Expectation {
  const absent: string[][] = [];
  const strip = (v: unknown, path: string[]): unknown => {
    if (!isObj(v)) return v;
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null) absent.push([...path, k]);
      else out[k] = strip(x, [...path, k]);
    }
    return out;
  };
  const expect = normalise(strip(body, [])) as Obj;
  return { kind: 'fields', expect, absent: absent.map((p) => p.map((s) => String(normalise(s)))), contained: [], lists };
}

function jsonPatchFields(ops: readonly { op: string; path: string; value?: unknown }[]): Expectation {
  const expect: Obj = {};
  const absent: string[][] = [];
  const contained: { path: string[]; item: unknown }[] = [];
  for (const o of ops) {
    const path = o.path.split('/').slice(1).map((s) => String(normalise(s.replaceAll('~1', '/').replaceAll('~0', '~'))));
    if (o.op === 'remove') absent.push(path);
    else if ((o.op === 'add' || o.op === 'replace') && path.at(-1) === '-') contained.push({ path: path.slice(0, -1), item: normalise(o.value) });
    else if (o.op === 'add' || o.op === 'replace') setPath(expect, path, normalise(o.value));
  }
  return { kind: 'fields', expect, absent, contained, lists: 'whole' };
}

function setPath(into: Obj, path: readonly string[], value: unknown): void {
  let at = into;
  for (const seg of path.slice(0, -1)) at = (isObj(at[seg]) ? at[seg] : (at[seg] = {})) as Obj;
  at[path.at(-1)!] = value;
}

function getPath(v: unknown, path: readonly string[]): unknown {
  let at = v;
  for (const seg of path) {
    if (Array.isArray(at)) at = at[Number(seg)];
    else if (isObj(at)) at = at[seg];
    else return undefined;
  }
  return at;
}

/** The fields where `live` (the raw object, or undefined when absent) differs from the decision. */
export function diffDecision(e: Expectation, live: unknown): FieldDiff[] {
  if (e.kind === 'gone') {
    const terminating = isObj(live) && isObj(live.metadata) && live.metadata.deletionTimestamp !== undefined;
    return live === undefined || terminating ? [] : [{ path: '(object)', ours: 'deleted', live: 'present' }];
  }
  if (live === undefined) return [{ path: '(object)', ours: 'present', live: 'absent' }];
  const n = normalise(live);
  const out = diffValue(e.expect, n, [], true, e.lists);
  for (const p of e.absent) {
    const v = getPath(n, p);
    if (v !== undefined) out.push({ path: p.join('.'), ours: undefined, live: v });
  }
  for (const c of e.contained) {
    const list = getPath(n, c.path);
    if (!Array.isArray(list) || !list.some((x) => diffValue(c.item, x, [], true, 'whole').length === 0)) out.push({ path: `${c.path.join('.')}[+]`, ours: c.item, live: list });
  }
  return out;
}

function diffValue(ours: unknown, live: unknown, path: string[], subset: boolean, lists: 'whole' | 'contain'): FieldDiff[] {
  // A map the live object lacks altogether: name each field it misses, not the map.
  if (isObj(ours) && live === undefined && Object.keys(ours).length > 0) live = {};
  if (isObj(ours) && isObj(live)) {
    const keys = subset ? Object.keys(ours) : [...new Set([...Object.keys(ours), ...Object.keys(live)])];
    return keys.flatMap((k) => diffValue(ours[k], live[k], [...path, k], subset, lists));
  }
  if (Array.isArray(ours) && Array.isArray(live)) {
    if (lists === 'contain') {
      const missing = ours.filter((o) => !live.some((l) => diffValue(o, l, [], true, lists).length === 0));
      return missing.length ? [{ path: path.join('.'), ours: missing, live }] : [];
    }
    if (ours.length === live.length) return ours.flatMap((o, i) => diffValue(o, live[i], [...path, String(i)], false, lists));
  }
  return jsonEqual(ours, live) || (isEmpty(ours, path) && isEmpty(live, path)) ? [] : [{ path: path.join('.'), ours, live }];
}

/**
 * Go's omitempty: an empty list or map, false, 0 and "" are absent on the wire (`finalizers: []`
 * written, none read back) — except a label's or an annotation's value, where "" is a value.
 */
function isEmpty(v: unknown, path: readonly string[]): boolean {
  if (v === '') return !path.includes('labels') && !path.includes('annotations');
  return v === undefined || v === false || v === 0 || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.keys(v).length === 0);
}
