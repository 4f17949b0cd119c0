/**
 * virt-api's identity rules, as pure decisions (KubeVirt `pkg/virt-api/webhooks/`: the VMI
 * mutator's UPDATE branch, the VMI update admitter, the VMI create admitter's metadata check, the
 * migration create admitter's priority check): what only KubeVirt's own service accounts
 * (`system:serviceaccount:kubevirt:{kubevirt-apiserver,kubevirt-controller,kubevirt-handler,
 * kubevirt-synchronization-controller}`) may write. The emulator runs them as in-process admission
 * hooks (identity-webhook.ts); the real lane's kube-apiserver calls them as KubeVirt's webhooks
 * (eviction-webhook-server.ts), with the request's `userInfo.username` — the impersonated user
 * when the request impersonated one.
 *
 * Not reproduced (docs/fidelity.md): the VM and VM pool admitters' same reserved-label check on a
 * VM template's metadata (our controllers create VMs only from a pool's template, which that
 * admitter already judged under the pool's author), virt-handler's node restriction, and what a
 * KubeVirt account's spec change is still checked for besides maxSockets and maxGuest (the storage
 * hot-plug admitter).
 */
import { isKubeVirtServiceAccount, KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT } from '../../shared/kube/kubevirt-identity.ts';

/** KubeVirt's install namespace in the sandbox. */
export const SANDBOX_KUBEVIRT_NAMESPACE = 'kubevirt';

/** The labels only KubeVirt's accounts may set or change on a VMI (`restrictedVmiLabels`). */
export const RESTRICTED_VMI_LABELS = ['kubevirt.io/created-by', 'kubevirt.io/migrationJobUID', 'kubevirt.io/nodeName', 'kubevirt.io/migrationTargetNodeName', 'kubevirt.io/schedulable', 'kubevirt.io/install-strategy'] as const;

/** KubeVirt's webhook names. */
export const VMI_CREATE_VALIDATOR = 'virtualmachineinstances-create-validator.kubevirt.io';
export const VMI_UPDATE_VALIDATOR = 'virtualmachineinstances-update-validator.kubevirt.io';
export const VMI_CREATE_VALIDATE_PATH = '/virtualmachineinstances-validate-create';
export const VMI_UPDATE_VALIDATE_PATH = '/virtualmachineinstances-validate-update';

/** A refusal: kube-apiserver answers `code` with the webhook's message. */
export type IdentityVerdict = { allowed: true } | { allowed: false; code: number; message: string; field?: string };

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * apimachinery's semantic equality as far as JSON shows it: key order is irrelevant, and a
 * missing, null, empty list or empty map member equals any other of those (Go decodes all of them
 * to a nil or an empty value that `equality.Semantic` does not tell apart).
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

/** True for the user names of KubeVirt's own service accounts in the sandbox. */
export const isKubeVirt = (user: string) => isKubeVirtServiceAccount(user, SANDBOX_KUBEVIRT_NAMESPACE);

/**
 * The VMI mutator on UPDATE: a status change by anyone but KubeVirt's accounts is put back (the
 * old status, returned); undefined leaves the update as sent. Silent, as upstream: the write
 * succeeds and the caller reads its own status back unchanged.
 */
export function revertedVmiStatus(oldVmi: Json, newVmi: Json, user: string): { status: unknown } | undefined {
  if (semanticEqual(oldVmi['status'], newVmi['status']) || isKubeVirt(user)) return undefined;
  return { status: oldVmi['status'] ?? {} };
}

function restrictedLabels(vmi: Json): Record<string, unknown> {
  const labels = isObj(vmi['metadata']) && isObj((vmi['metadata'] as Json)['labels']) ? ((vmi['metadata'] as Json)['labels'] as Json) : {};
  return Object.fromEntries(RESTRICTED_VMI_LABELS.filter((l) => labels[l] !== undefined).map((l) => [l, labels[l]]));
}

function cpuOf(vmi: Json): Json {
  const domain = isObj(vmi['spec']) ? (vmi['spec'] as Json)['domain'] : undefined;
  return isObj(domain) && isObj(domain['cpu']) ? (domain['cpu'] as Json) : {};
}

function maxGuestOf(vmi: Json): unknown {
  const domain = isObj(vmi['spec']) ? (vmi['spec'] as Json)['domain'] : undefined;
  return isObj(domain) && isObj(domain['memory']) ? (domain['memory'] as Json)['maxGuest'] : undefined;
}

/** The VMI update admitter: spec changes only by KubeVirt's accounts (with its hot-plug limits), reserved labels likewise. */
export function admitVmiUpdate(oldVmi: Json, newVmi: Json, user: string): IdentityVerdict {
  const kubevirt = isKubeVirt(user);
  if (!semanticEqual(oldVmi['spec'], newVmi['spec'])) {
    if (!kubevirt) return { allowed: false, code: 422, message: 'update of VMI object is restricted' };
    if ((cpuOf(oldVmi)['maxSockets'] ?? 0) !== (cpuOf(newVmi)['maxSockets'] ?? 0)) return { allowed: false, code: 422, message: 'CPU topology maxSockets changed' };
    const [before, after] = [maxGuestOf(oldVmi), maxGuestOf(newVmi)];
    if (before !== undefined && after !== undefined && String(before) !== String(after)) return { allowed: false, code: 422, message: 'Memory maxGuest changed' };
  }
  if (!kubevirt && !semanticEqual(restrictedLabels(oldVmi), restrictedLabels(newVmi))) {
    return { allowed: false, code: 422, message: 'modification of the following reserved kubevirt.io/ labels on a VMI object is prohibited' };
  }
  return { allowed: true };
}

/** The VMI create admitter's metadata check: reserved labels only from KubeVirt's accounts. */
export function admitVmiCreate(vmi: Json, user: string): IdentityVerdict {
  if (isKubeVirt(user) || Object.keys(restrictedLabels(vmi)).length === 0) return { allowed: true };
  return { allowed: false, code: 422, message: 'creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited', field: 'metadata.labels' };
}

/** The migration create admitter's priority check: only virt-controller's account sets `spec.priority`. */
export function admitMigrationPriority(migration: Json, user: string): IdentityVerdict {
  const spec = isObj(migration['spec']) ? (migration['spec'] as Json) : {};
  if (spec['priority'] === undefined || spec['priority'] === null) return { allowed: true };
  if (isKubeVirt(user) && user.endsWith(KUBEVIRT_CONTROLLER_SERVICE_ACCOUNT)) return { allowed: true };
  return { allowed: false, code: 422, message: 'Migration priority queue, only virt-controller is allowed to set priority field', field: 'spec.migrationPriority' };
}
