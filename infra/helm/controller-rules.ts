/**
 * What each controller may do in the cluster, as the Helm chart's per-controller RBAC
 * (infra/helm/virt-reconciler/files/controllers.json, written by `npm run gen:kubernetes`) takes
 * it: the rules of the controller's definition (`rbac` in functions/<controller>/controller.ts,
 * from functions/<controller>/rbac.ts) — the one place they are written.
 */
import { definitionOf } from '../../functions/registry.ts';
import { controllerInfo, type Controller } from '../../shared/controllers.ts';
import { KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT, rulesImpersonate } from '../../shared/kube/kubevirt-identity.ts';

/** One RBAC PolicyRule, as a ClusterRole lists it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The rules of a controller's ClusterRole: only the three fields RBAC reads. */
export function controllerRules(controller: Controller): PolicyRule[] {
  return definitionOf(controller).rbac.map((r) => ({ apiGroups: [...r.apiGroups], resources: [...r.resources], verbs: [...r.verbs] }));
}

/**
 * Whether the controller writes what virt-api judges by identity (VMI creates, updates and
 * patches; migration creates: shared/kube/kubevirt-identity.ts) and so sends those requests as
 * KubeVirt's controller: it then needs `impersonate` on that one ServiceAccount, in KubeVirt's
 * namespace (the chart's Role there, beside the controller's ClusterRole).
 */
export function controllerImpersonatesKubeVirt(controller: Controller): boolean {
  return rulesImpersonate(definitionOf(controller).rbac);
}

/** The rule of that Role: `impersonate` on KubeVirt's controller ServiceAccount, by name. */
export const IMPERSONATION_RULE = { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT], verbs: ['impersonate'] } as const;

/** Why the controller's Role is there (rendered as its comment). */
export function impersonationDescription(controller: Controller): string[] {
  return [
    `The ${controllerInfo(controller).title} controller writes VMIs or creates migrations, which`,
    `virt-api's webhooks judge by the requester: it sends those requests as KubeVirt's controller`,
    `(Impersonate-User: system:serviceaccount:<KubeVirt namespace>:${KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT},`,
    'docs/kube-client.md), and may impersonate that one account, nothing else.',
  ];
}

/** What the controller's role is for, line by line (rendered as the comment heading its file). */
export function controllerDescription(controller: Controller): string[] {
  return [
    `What the ${controllerInfo(controller).title} controller function (AWS Lambda) may do in the`,
    `cluster, and nothing more: the calls of its reconcile (functions/${controller}/rbac.ts). Its IAM role`,
    `is mapped by an EKS access entry (docs/deploy-aws.md) to the user virt-reconciler:${controller}, bound here.`,
  ];
}

/** Why each rule is there, per rule of {@link controllerRules} (its `why`, wrapped); RBAC never reads them. */
export function controllerRuleNotes(controller: Controller): string[][] {
  return definitionOf(controller).rbac.map((r) => (r.why ? wrap(r.why, 96) : []));
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
