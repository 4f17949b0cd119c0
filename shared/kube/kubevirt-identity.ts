/**
 * Which of our requests are sent as KubeVirt's virt-controller (Kubernetes impersonation), and why
 * (docs/kube-client.md, "Writing as KubeVirt's controller").
 *
 * virt-api's admission webhooks judge some writes by the requester's user name, allowing them
 * only to KubeVirt's own service accounts (`system:serviceaccount:<kubevirt namespace>:` +
 * `kubevirt-apiserver`, `kubevirt-controller`, `kubevirt-handler`,
 * `kubevirt-synchronization-controller`):
 * - a VMI update that changes `status` by anyone else has its status put back (the VMI mutator:
 *   VMIs have no status subresource), silently — the write "succeeds" and nothing changed;
 * - a VMI update that changes `spec`, or a reserved `kubevirt.io/` label (`nodeName`,
 *   `migrationTargetNodeName`, `created-by`, `migrationJobUID`, `schedulable`, `install-strategy`),
 *   is refused (the VMI update admitter); a VMI created with one of those labels is refused;
 * - a migration with `spec.priority` is refused unless virt-controller itself creates it.
 *
 * Our controllers write all of these (the VMI controller's status and `kubevirt.io/nodeName`, the
 * VM controller's hot-plugs into the VMI spec, the migration controller's target label and state,
 * the evacuation and workload-update controllers' prioritised migrations), so on a cluster with
 * virt-api they must be seen as KubeVirt's controller. The rule is the narrowest that does it:
 * creates, updates and patches of `virtualmachineinstances` (kubevirt.io), creates of
 * `virtualmachineinstancemigrations`. Everything else — reads, deletes, pods, VMs, events — keeps
 * the caller's own identity, so each controller's RBAC stays its own least privilege; the
 * impersonated requests are authorised as the impersonated account (virt-operator gives
 * `kubevirt-controller` its ClusterRole on a real cluster).
 */
import type { ResourceCoordinates, Subresource } from '../api/resources.ts';
import type { Verb } from './errors.ts';

/** KubeVirt's install namespace when nothing says otherwise. */
export const DEFAULT_KUBEVIRT_NAMESPACE = 'kubevirt';

/** KubeVirt's virt-controller ServiceAccount (virt-operator's `ControllerServiceAccountName`). */
export const KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT = 'kubevirt-controller';

/** The service accounts virt-api counts as KubeVirt's own (`KubeVirtServiceAccounts`). */
export const KUBEVIRT_SERVICE_ACCOUNTS = ['kubevirt-apiserver', KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT, 'kubevirt-handler', 'kubevirt-synchronization-controller'] as const;

/** `system:serviceaccount:<namespace>:<name>`, the user name Kubernetes gives a ServiceAccount. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The user virt-api's identity rules let through as virt-controller, for KubeVirt installed in `namespace`. */
export function kubevirtControllerUser(namespace: string = DEFAULT_KUBEVIRT_NAMESPACE): string {
  return serviceAccountUser(namespace, KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT);
}

/** Whether `user` is one of KubeVirt's service accounts for KubeVirt in `namespace`. */
export function isKubeVirtServiceAccount(user: string, namespace: string = DEFAULT_KUBEVIRT_NAMESPACE): boolean {
  return KUBEVIRT_SERVICE_ACCOUNTS.some((sa) => serviceAccountUser(namespace, sa) === user);
}

/** What a request is, for the rule. */
export interface RequestShape {
  readonly verb: Verb;
  readonly res: Pick<ResourceCoordinates, 'group' | 'plural'>;
  readonly subresource?: Subresource | undefined;
}

/** Writes of an object virt-api judges by identity: the requests that impersonate KubeVirt's controller. */
export function judgedByVirtApiIdentity(r: RequestShape): boolean {
  if (r.res.group !== 'kubevirt.io' || r.subresource !== undefined) return false;
  if (r.res.plural === 'virtualmachineinstances') return r.verb === 'create' || r.verb === 'update' || r.verb === 'patch';
  if (r.res.plural === 'virtualmachineinstancemigrations') return r.verb === 'create';
  return false;
}

/** Which RBAC verbs on which kubevirt.io resources make a controller one that impersonates (its rules, as judgedByVirtApiIdentity reads them). */
export function rulesImpersonate(rules: readonly { apiGroups: readonly string[]; resources: readonly string[]; verbs: readonly string[] }[]): boolean {
  return rules.some((r) => r.apiGroups.includes('kubevirt.io') && r.resources.some((plural) => r.verbs.some((v) => judgedByVirtApiIdentity({ verb: v as Verb, res: { group: 'kubevirt.io', plural } }))));
}

/** The `Impersonate-User` header a transport sends. */
export const IMPERSONATE_USER_HEADER = 'Impersonate-User';

/** The environment variables of {@link impersonationFromEnv}. */
export const KUBEVIRT_IDENTITY_ENV = { namespace: 'KUBEVIRT_NAMESPACE', impersonate: 'VR_IMPERSONATE_KUBEVIRT' } as const;

/**
 * The `impersonateKubeVirtController` of a client from the environment (the Lambda functions,
 * the relay): KubeVirt's controller in `KUBEVIRT_NAMESPACE` (default `kubevirt`), unless
 * `VR_IMPERSONATE_KUBEVIRT` is `false` (a cluster without virt-api, where no identity is judged).
 */
export function impersonationFromEnv(vars: Readonly<Record<string, string | undefined>>): string | undefined {
  const flag = vars[KUBEVIRT_IDENTITY_ENV.impersonate]?.trim().toLowerCase();
  if (flag === 'false' || flag === '0' || flag === 'off') return undefined;
  return kubevirtControllerUser(vars[KUBEVIRT_IDENTITY_ENV.namespace]?.trim() || DEFAULT_KUBEVIRT_NAMESPACE);
}
