/**
 * Label-selector, node-selector-term and toleration matching, with the semantics the real
 * scheduler uses (k8s.io/apimachinery labels, component-helpers nodeaffinity, v1 helper taints).
 */
import type { LabelSelector, LabelSelectorRequirement, NodeSelectorTerm, StringMap, Taint, Toleration } from './objects.ts';

function requirementMatches(req: LabelSelectorRequirement, labels: StringMap): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return has && values.includes(value ?? '');
    case 'NotIn':
      return !has || !values.includes(value ?? '');
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      // Gt/Lt compare integers; an unparsable label or bound never matches.
      const n = Number(value);
      const bound = Number(values[0]);
      if (!has || values.length !== 1 || !Number.isInteger(n) || !Number.isInteger(bound)) return false;
      return req.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

/** metav1.LabelSelector semantics: an empty selector matches everything. */
export function labelSelectorMatches(selector: LabelSelector | undefined, labels: StringMap | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  return (selector.matchExpressions ?? []).every((r) => requirementMatches(r, l));
}

/** `spec.nodeSelector`: every key must be present with the same value. */
export function nodeSelectorMatches(selector: StringMap | undefined, labels: StringMap | undefined): boolean {
  const l = labels ?? {};
  return Object.entries(selector ?? {}).every(([k, v]) => l[k] === v);
}

/**
 * Required node affinity: terms are ORed, requirements inside a term ANDed; a term with no
 * requirements matches nothing (as upstream), and no terms at all means no constraint.
 */
export function nodeSelectorTermsMatch(terms: NodeSelectorTerm[] | undefined, nodeName: string, labels: StringMap | undefined): boolean {
  if (!terms || terms.length === 0) return true;
  const fields: StringMap = { 'metadata.name': nodeName };
  return terms.some((t) => {
    const exprs = t.matchExpressions ?? [];
    const flds = t.matchFields ?? [];
    if (exprs.length === 0 && flds.length === 0) return false;
    return exprs.every((r) => requirementMatches(r, labels ?? {})) && flds.every((r) => requirementMatches(r, fields));
  });
}

/** v1 `Toleration.ToleratesTaint`. */
export function tolerates(tol: Toleration, taint: Taint): boolean {
  if (tol.effect && tol.effect !== taint.effect) return false;
  if (tol.key && tol.key !== taint.key) return false;
  if (!tol.key && tol.operator !== 'Exists') return false;
  if (tol.operator === 'Exists') return true;
  return (tol.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint none of the tolerations tolerate, if any. */
export function untoleratedTaint(taints: Taint[], tolerations: Toleration[] | undefined): Taint | undefined {
  return taints.find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !(tolerations ?? []).some((tol) => tolerates(tol, t)));
}
