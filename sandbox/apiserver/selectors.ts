/**
 * Label selectors (full set-based syntax) and field selectors (`=`, `==`, `!=` over the fields
 * the real API lets each resource select on). Parse errors are 400 BadRequest, as upstream.
 */
import { badRequest } from './errors.ts';
import type { ResourceInfo } from './resources.ts';
import type { KubeObject } from './types.ts';

type Requirement =
  | { key: string; op: 'exists' | 'notexists' }
  | { key: string; op: 'in' | 'notin'; values: string[] };

/** A parsed label selector; an empty one matches everything. */
export interface LabelSelector {
  matches(labels: Record<string, string> | undefined): boolean;
  /** Its `key=value` requirements (one value, equality): what a label index can answer. */
  readonly equalities: readonly (readonly [string, string])[];
}

// Upstream allows an optional DNS prefix and a 63-char name part; values are ≤ 63 chars.
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

function checkKey(key: string, raw: string): string {
  if (!KEY.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${raw}"`);
  return key;
}

function checkValue(value: string, raw: string): string {
  if (!VALUE.test(value)) throw badRequest(`unable to parse requirement: invalid label value: "${value}" in selector "${raw}"`);
  return value;
}

/** Splits on commas that are not inside parentheses. */
function splitTerms(raw: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of raw) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim());
}

/** Parses `a=b,c!=d,e in (f,g),h notin (i),j,!k`. */
export function parseLabelSelector(raw: string | undefined | null): LabelSelector {
  const reqs: Requirement[] = [];
  const text = (raw ?? '').trim();
  if (text !== '') {
    for (const term of splitTerms(text)) {
      if (term === '') throw badRequest(`unable to parse requirement: found '', expected: identifier in selector "${raw}"`);
      const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
      if (set) {
        const values = set[3]!.split(',').map((v) => checkValue(v.trim(), text));
        reqs.push({ key: checkKey(set[1]!, text), op: set[2] as 'in' | 'notin', values });
        continue;
      }
      const eq = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
      if (eq) {
        const value = checkValue(eq[3]!, text);
        reqs.push({ key: checkKey(eq[1]!, text), op: eq[2] === '!=' ? 'notin' : 'in', values: [value] });
        continue;
      }
      const not = /^!\s*(\S+)$/.exec(term);
      if (not) {
        reqs.push({ key: checkKey(not[1]!, text), op: 'notexists' });
        continue;
      }
      if (/^\S+$/.test(term) && !/[=!()]/.test(term)) {
        reqs.push({ key: checkKey(term, text), op: 'exists' });
        continue;
      }
      throw badRequest(`unable to parse requirement: invalid selector term "${term}" in "${raw}"`);
    }
  }
  return {
    equalities: reqs.flatMap((q) => (q.op === 'in' && q.values.length === 1 ? [[q.key, q.values[0]!] as const] : [])),
    matches(labels) {
      const l = labels ?? {};
      return reqs.every((q) => {
        const has = Object.hasOwn(l, q.key);
        switch (q.op) {
          case 'exists':
            return has;
          case 'notexists':
            return !has;
          case 'in':
            return has && q.values.includes(l[q.key]!);
          case 'notin':
            return !has || !q.values.includes(l[q.key]!);
        }
      });
    },
  };
}

/** A parsed field selector. */
export interface FieldSelector {
  matches(obj: KubeObject): boolean;
}

/** The value of a selectable field, as the API stringifies it ("" when absent). */
export function fieldValue(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return path === 'spec.hostNetwork' || path === 'spec.unschedulable' ? 'false' : '';
  return String(cur);
}

/** Parses `metadata.name=a,spec.nodeName!=b`, rejecting labels the resource cannot select on. */
export function parseFieldSelector(raw: string | undefined | null, res: ResourceInfo): FieldSelector {
  const reqs: Array<{ field: string; neg: boolean; value: string }> = [];
  const text = (raw ?? '').trim();
  if (text !== '') {
    for (const term of text.split(',')) {
      const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term.trim());
      if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
      const field = m[1]!.trim();
      const allowed = field === 'metadata.name' || field === 'metadata.namespace' || (res.selectableFields ?? []).includes(field);
      if (!allowed) throw badRequest(`field label not supported: ${field}`);
      reqs.push({ field, neg: m[2] === '!=', value: m[3]!.trim() });
    }
  }
  return {
    matches(obj) {
      return reqs.every((q) => (fieldValue(obj, q.field) === q.value) !== q.neg);
    },
  };
}

/**
 * Whether a `metav1.LabelSelector` object (`matchLabels` + `matchExpressions`) selects `labels`.
 * An empty selector selects everything; a missing one (undefined/null) selects nothing.
 */
export function selectorObjectMatches(selector: unknown, labels: Record<string, string> | undefined): boolean {
  if (typeof selector !== 'object' || selector === null) return false;
  const sel = selector as { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
  const have = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (have[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const present = Object.hasOwn(have, e.key);
    const inValues = present && (e.values ?? []).includes(have[e.key]!);
    const ok = e.operator === 'In' ? inValues : e.operator === 'NotIn' ? !inValues : e.operator === 'Exists' ? present : e.operator === 'DoesNotExist' ? !present : false;
    if (!ok) return false;
  }
  return true;
}
