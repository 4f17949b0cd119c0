/**
 * virt-api's migration create admitter on the emulator: an admission hook on the create of a
 * VirtualMachineInstanceMigration (`api.admission.onCreate`) that reads the VMI from the store and
 * refuses as kube-apiserver relays a webhook's refusal — 400 (virt-api's
 * `ToAdmissionResponseError` code), the message prefixed with `admission webhook
 * "migration-create-validator.kubevirt.io" denied the request: `. The decision is
 * migration-admission.ts; the real lane calls it over HTTPS (eviction-webhook-server.ts).
 */
import type { CreateHook } from '../apiserver/core.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { Vmi } from '../nodes/objects.ts';
import { admitMigration, MIGRATION_CREATE_VALIDATOR, type MigrationRequest } from './migration-admission.ts';

/** How kube-apiserver words a webhook's refusal. */
export function deniedBy(webhook: string, message: string): string {
  return `admission webhook "${webhook}" denied the request: ${message}`;
}

export function virtApiMigrationCreateHook(): CreateHook {
  return (core, request) => {
    if (request.res.group !== 'kubevirt.io' || request.res.resource !== 'virtualmachineinstancemigrations') return;
    const migration = request.object as MigrationRequest;
    const vmiRes = core.registry.byPath('kubevirt.io', 'v1', 'virtualmachineinstances');
    const name = migration.spec?.vmiName;
    const vmi = vmiRes && name ? (core.store.peek(vmiRes, request.namespace, name) as Vmi | undefined) : undefined;
    const verdict = admitMigration({ ...migration, metadata: { namespace: request.namespace ?? '' } }, vmi);
    if (!verdict.allowed) throw new ApiError(400, '', deniedBy(MIGRATION_CREATE_VALIDATOR, verdict.message));
  };
}
