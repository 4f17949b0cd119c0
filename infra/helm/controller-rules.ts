/**
 * What each controller may do in the cluster: the ONE place the Helm chart's per-controller RBAC
 * (infra/helm/virt-reconciler/files/controllers.json, written by `npm run gen:kubernetes`) takes
 * its rules from.
 *
 * For now the rules are read from infra/helm/controller-rules/<controller>-controller-rbac.yaml,
 * the ClusterRoles as they were written by hand (with the reasons for each rule in comments);
 * infra/kubernetes/ is generated from the chart now, so it can no longer be the source. When each
 * controller's definition carries its own rules, {@link controllerRules} reads them from there and
 * nothing else here changes.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isSeq, parseAllDocuments } from 'yaml';
import type { Controller } from '../../shared/controllers.ts';

const rulesDir = join(resolve(dirname(fileURLToPath(import.meta.url))), 'controller-rules');

/** One RBAC PolicyRule, as a ClusterRole lists it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const fileOf = (controller: Controller): string => join(rulesDir, `${controller}-controller-rbac.yaml`);

/** The rules of a controller's ClusterRole. Throws, naming the file, when there are none. */
export function controllerRules(controller: Controller): PolicyRule[] {
  const file = fileOf(controller);
  const role = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as { kind?: string; rules?: PolicyRule[] } | null)
    .find((o) => o?.kind === 'ClusterRole');
  if (!role?.rules?.length) throw new Error(`${file}: no ClusterRole with rules for the ${controller} controller`);
  // Only the three fields RBAC reads: nothing else of the file reaches the chart.
  return role.rules.map((r) => ({ apiGroups: [...r.apiGroups], resources: [...r.resources], verbs: [...r.verbs] }));
}

/** Why the controller's role is what it is: the comment heading its file, line by line. */
export function controllerDescription(controller: Controller): string[] {
  const lines = readFileSync(fileOf(controller), 'utf8').split('\n');
  const end = lines.findIndex((l) => !l.startsWith('#'));
  return lines.slice(0, end < 0 ? lines.length : end).map((l) => l.replace(/^# ?/, ''));
}

/**
 * Why each rule is there: per rule of {@link controllerRules}, the comment lines above it in the
 * file (none for most). Rendered as comments beside the rules; RBAC never reads them.
 */
export function controllerRuleNotes(controller: Controller): string[][] {
  const doc = parseAllDocuments(readFileSync(fileOf(controller), 'utf8')).find((d) => d.get('kind') === 'ClusterRole');
  const rules = doc?.get('rules');
  if (!isSeq(rules)) return [];
  const lines = (comment: string | null | undefined): string[] => (comment ? comment.split('\n').map((l) => l.replace(/^ ?/, '')) : []);
  // The parser keeps a comment above the FIRST rule on the list itself.
  return rules.items.map((item, i) => lines((isMap(item) ? item.commentBefore : undefined) ?? (i === 0 ? rules.commentBefore : undefined)));
}
