/**
 * virt-api's identity rules on the emulator (identity-admission.ts): in-process admission hooks
 * that see the request's user name as kube-apiserver would send it to the webhook — the
 * impersonated user when the request carried `Impersonate-User`, else the identity's user name
 * (the sandbox maps its identities to the real lane's users, so `kubevirt-controller` is
 * `system:serviceaccount:kubevirt:kubevirt-controller` on both lanes). A refusal is relayed as
 * kube-apiserver relays virt-api's: 422 Invalid, `admission webhook "<name>" denied the request: …`.
 */
import type { CreateHook, MutatingUpdateHook, UpdateHook } from '../apiserver/core.ts';
import { ApiError } from '../apiserver/errors.ts';
import { admitMigrationPriority, admitVmiCreate, admitVmiUpdate, isKubeVirt, revertedVmiStatus, VMI_CREATE_VALIDATOR, VMI_UPDATE_VALIDATOR, type IdentityVerdict } from './identity-admission.ts';
import { MIGRATION_CREATE_VALIDATOR } from './migration-admission.ts';
import { deniedBy } from './migration-webhook.ts';

const isVmis = (res: { group: string; resource: string }) => res.group === 'kubevirt.io' && res.resource === 'virtualmachineinstances';

/** Throws the refusal as kube-apiserver answers it. */
export function enforce(webhook: string, verdict: IdentityVerdict): void {
  if (verdict.allowed) return;
  const cause = { reason: 'FieldValueInvalid', message: verdict.message, ...(verdict.field ? { field: verdict.field } : {}) };
  throw new ApiError(verdict.code, 'Invalid', deniedBy(webhook, verdict.message), { causes: [cause] });
}

/** The VMI mutator's UPDATE branch: a status change by anyone but KubeVirt's accounts is put back. */
export function virtApiStatusRevertHook(): MutatingUpdateHook {
  return (_core, request) => {
    // KubeVirt's accounts may change the status: decided from the user alone, before the object is read (and copied).
    if (!isVmis(request.res) || request.subresource !== undefined || isKubeVirt(request.user)) return undefined;
    const reverted = revertedVmiStatus(request.oldObject, request.object, request.user);
    return reverted ? { ...request.object, status: reverted.status } : undefined;
  };
}

/** The VMI update admitter. */
export function virtApiVmiUpdateHook(): UpdateHook {
  return (_core, request) => {
    if (!isVmis(request.res) || request.subresource !== undefined) return;
    enforce(VMI_UPDATE_VALIDATOR, admitVmiUpdate(request.oldObject, request.object, request.user));
  };
}

/** The VMI create admitter's reserved labels and the migration create admitter's priority. */
export function virtApiIdentityCreateHook(): CreateHook {
  return (_core, request) => {
    if (request.res.group !== 'kubevirt.io') return;
    if (request.res.resource === 'virtualmachineinstances') enforce(VMI_CREATE_VALIDATOR, admitVmiCreate(request.object, request.user));
    else if (request.res.resource === 'virtualmachineinstancemigrations') enforce(MIGRATION_CREATE_VALIDATOR, admitMigrationPriority(request.object, request.user));
  };
}
