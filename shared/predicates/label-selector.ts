/**
 * `metav1.LabelSelector` as controllers use it (reference-replicas-pools-clones.md §0): does it
 * match a set of labels, and its canonical string (the `status.labelSelector` HPA reads through
 * `/scale`). A `nil` selector matches nothing; an empty one `{}` matches everything; both print
 * `""`.
 */
import type { LabelSelector } from '../api/index.ts';
import { InvalidInputError } from '../errors.ts';

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** Throws {@link InvalidInputError} naming the field when the selector cannot be evaluated. */
export function validateSelector(selector: LabelSelector, field: string): void {
  for (const [i, r] of (selector.matchExpressions ?? []).entries()) {
    if (typeof r.key !== 'string' || r.key === '') throw new InvalidInputError(`${field}.matchExpressions[${i}].key`, 'must be set');
    if (!OPERATORS.has(r.operator)) throw new InvalidInputError(`${field}.matchExpressions[${i}].operator`, `"${r.operator}" is not a valid label selector operator`);
    const n = r.values?.length ?? 0;
    if ((r.operator === 'In' || r.operator === 'NotIn') && n === 0) throw new InvalidInputError(`${field}.matchExpressions[${i}].values`, `must be specified when operator is ${r.operator}`);
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && n > 0) throw new InvalidInputError(`${field}.matchExpressions[${i}].values`, `may not be specified when operator is ${r.operator}`);
  }
}

/** True when `labels` satisfy every requirement; `undefined` (a nil selector) matches nothing. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const r of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, r.key);
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (!has || !values.includes(l[r.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[r.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** apimachinery's canonical form: requirements sorted by key, values sorted, joined by `,`. */
export function selectorString(selector: LabelSelector | undefined): string {
  if (!selector) return '';
  const reqs: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) reqs.push({ key: k, text: `${k}=${v}` });
  for (const r of selector.matchExpressions ?? []) {
    const values = [...(r.values ?? [])].sort();
    const text =
      r.operator === 'In' ? `${r.key} in (${values.join(',')})` : r.operator === 'NotIn' ? `${r.key} notin (${values.join(',')})` : r.operator === 'Exists' ? r.key : `!${r.key}`;
    reqs.push({ key: r.key, text });
  }
  return reqs
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(',');
}
