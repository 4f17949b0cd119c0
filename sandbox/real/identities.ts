/**
 * Who talks to the real control plane, and what each may do. Every identity has its own static
 * bearer token (--token-auth-file), so the audit log attributes each request; the product's
 * identities carry the user names the RBAC in infra/kubernetes/ binds (the relay's
 * ServiceAccount, the functions' `virt-reconciler:<controller>` users), so on this lane every
 * call of ours is checked against exactly those roles: a 403 is a bug in the rules or in the
 * controller. Tests and the operator are cluster admins; the simulated node side has the role
 * below (what a kubelet, virt-handler and the KubeVirt operator write).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { CONTROLLERS, perController, type Controller } from '../../shared/controllers.ts';
import { VIRT_API_IDENTITY } from '../kubevirt/eviction-admission.ts';

/** One identity: the user name the API server sees and its groups. */
export interface Identity {
  user: string;
  groups?: string[];
}

/** The group of the all-in-one local runtime identities (relay and every controller in one). */
const LOCAL_RUNTIME_GROUP = 'virt-reconciler:local-runtime';
const NODE_SIM_ROLE = 'virt-reconciler-sandbox-node-sim';
/**
 * KubeVirt's own virt-controller, run beside ours by the benchmarks (test/bench/support/kubevirt.ts),
 * under the user its ServiceAccount is in a KubeVirt install, so the audit log keeps its requests
 * apart from ours.
 */
export const KUBEVIRT_CONTROLLER_IDENTITY = 'kubevirt-controller';
const VIRT_API_ROLE = 'virt-reconciler-sandbox-virt-api';

/** The RBAC file of a registered controller: one ClusterRole per controller of the registry (shared/controllers.ts). */
export const controllerRbacFile = (c: Controller): string => `${c}-controller-rbac.yaml`;
/** The ClusterRole a controller's file defines. */
export const controllerRole = (c: Controller): string => `virt-reconciler-${c}`;
/** The user an EKS access entry maps a controller's Lambda role to, bound by its ClusterRole. */
export const controllerUser = (c: Controller): string => `virt-reconciler:${c}`;

/** The product's roles (infra/kubernetes/) an all-in-one local runtime gets together. */
export const PRODUCT_CLUSTER_ROLES = ['virt-reconciler-relay', ...CONTROLLERS.map(controllerRole)];

/** Every identity the sandbox knows on the real lane, by the name callers pass to kubeConfig(). */
export const IDENTITIES: Record<string, Identity> = {
  // The tests, the operator, the CLI: cluster admins.
  admin: { user: 'admin', groups: ['system:masters'] },
  test: { user: 'test', groups: ['system:masters'] },
  'bench-user': { user: 'bench-user', groups: ['system:masters'] },
  // The simulated kubelet and virt-handler.
  'node-sim': { user: 'virt-reconciler-sandbox:node-sim' },
  // virt-api's eviction webhook (sandbox/kubevirt/eviction-webhook-server.ts), as virt-api's ServiceAccount.
  [VIRT_API_IDENTITY]: { user: 'system:serviceaccount:kubevirt:kubevirt-apiserver' },
  [KUBEVIRT_CONTROLLER_IDENTITY]: { user: 'system:serviceaccount:kubevirt:kubevirt-controller' },
  // The product's identities, exactly as infra/kubernetes/ binds them.
  relay: { user: 'system:serviceaccount:virt-reconciler:virt-reconciler-relay' },
  ...Object.fromEntries(CONTROLLERS.map((c) => [`${c}-controller`, { user: controllerUser(c) }])),
  // The local runtime (one process: relay and all controllers) under the names the suites use.
  runtime: { user: 'runtime', groups: [LOCAL_RUNTIME_GROUP] },
  reconciler: { user: 'reconciler', groups: [LOCAL_RUNTIME_GROUP] },
  'virt-reconciler': { user: 'virt-reconciler', groups: [LOCAL_RUNTIME_GROUP] },
};

/** The identity of each part of the local runtime when each has its own (real lane). */
export const PART_IDENTITY: Readonly<Record<'relay' | Controller, string>> = { relay: 'relay', ...perController((c) => `${c}-controller`) };

const meta = (name: string) => ({ name, labels: { 'app.kubernetes.io/part-of': 'virt-reconciler-sandbox' } });

/** The sandbox's own RBAC on the real lane: the node side's role, virt-api's, and the local runtime's bindings. */
export function sandboxRbac(): KubernetesObject[] {
  // The simulated node side plays the kubelet, virt-handler, virt-operator, CDI, the CSI side and
  // the controllers the emulator adds (a DaemonSet controller); none of that is the product, so
  // its role is not what this lane checks: it may do anything, like the components it stands in
  // for together. The product's identities are the ones held to infra/kubernetes/.
  const nodeSim = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: meta(NODE_SIM_ROLE),
    rules: [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ],
  };
  // virt-api's eviction webhook: what the interceptor reads (the pod, its VMI, the cluster's
  // eviction strategy) and the mark it writes (a JSON patch of the VMI, which has no status
  // subresource). Minimal, as a webhook's identity should be: it is not the product either, but
  // a broader role would hide a webhook that reads or writes more than virt-api does.
  const virtApi = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: meta(VIRT_API_ROLE),
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get', 'patch'] },
      { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['get', 'list'] },
    ],
  };
  const binding = (name: string, role: string, subject: { kind: string; name: string }) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
  });
  return [
    // KubeVirt's virt-controller is a comparison, not the product: bound to cluster-admin rather
    // than to the ClusterRole virt-operator gives it (a superset of that role's rules, so nothing
    // it does is refused; what it may do is not what this lane checks).
    binding('virt-reconciler-sandbox-kubevirt-controller', 'cluster-admin', { kind: 'User', name: IDENTITIES[KUBEVIRT_CONTROLLER_IDENTITY]!.user }),
    nodeSim,
    binding(NODE_SIM_ROLE, NODE_SIM_ROLE, { kind: 'User', name: IDENTITIES['node-sim']!.user }),
    // The node side acts as virt-handler's ServiceAccount (Impersonate-User, sandbox.ts), whose VMI
    // status writes virt-api keeps: the impersonated user gets the node side's role.
    binding(`${NODE_SIM_ROLE}-as-kubevirt-handler`, NODE_SIM_ROLE, { kind: 'User', name: 'system:serviceaccount:kubevirt:kubevirt-handler' }),
    virtApi,
    binding(VIRT_API_ROLE, VIRT_API_ROLE, { kind: 'User', name: IDENTITIES[VIRT_API_IDENTITY]!.user }),
    ...PRODUCT_CLUSTER_ROLES.map((role) => binding(`virt-reconciler-sandbox-local-runtime-${role.replace(/^virt-reconciler-/, '')}`, role, { kind: 'Group', name: LOCAL_RUNTIME_GROUP })),
    // The controllers' impersonation Roles in KubeVirt's namespace (a controller that writes VMIs
    // may impersonate kubevirt-controller), bound by name like the ClusterRoles above: a binding to
    // a controller without one grants nothing, and a chart installed later is bound already.
    ...localRuntimeRoleBindings(CONTROLLERS.map((c) => ({ name: controllerRole(c), namespace: 'kubevirt' }))),
  ];
}

/** The local runtime's namespaced bindings (Roles in infra/kubernetes/ for its leases). */
export function localRuntimeRoleBindings(roles: { name: string; namespace: string }[]): KubernetesObject[] {
  return roles.map((r) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { ...meta(`virt-reconciler-sandbox-local-runtime-${r.name.replace(/^virt-reconciler-/, '')}`), namespace: r.namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: r.name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: LOCAL_RUNTIME_GROUP }],
  }));
}
