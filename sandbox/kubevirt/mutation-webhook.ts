/**
 * virt-api's VMI, VM and migration mutating webhooks (CREATE) on both lanes: the emulator runs them as an
 * in-process mutating admission hook (`api.admission.onMutateCreate`); the real lane's
 * kube-apiserver calls them over HTTPS as KubeVirt's MutatingWebhookConfiguration `virt-api-mutator`
 * (served by eviction-webhook-server.ts, the sandbox's one virt-api webhook server), whose answer is
 * a JSON patch built here. The mutations themselves are vmi-mutation.ts, vm-mutation.ts and
 * migration-mutation.ts.
 *
 * The VMI mutator is registered for CREATE and UPDATE, as KubeVirt's: on update it only puts back
 * status changes by users that are not KubeVirt's service accounts (identity-admission.ts; on the
 * emulator that is identity-webhook.ts's hook). The VM mutator is registered for CREATE only, where
 * KubeVirt's also names UPDATE: there it re-applies the architecture and machine type defaults a VM
 * created here already has.
 */
import type { MutatingCreateHook } from '../apiserver/core.ts';
import type { KubeVirt, VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { mutateVmiOnCreate } from './vmi-mutation.ts';
import { mutateVmOnCreate } from './vm-mutation.ts';
import { mutateMigrationOnCreate } from './migration-mutation.ts';

/** KubeVirt's names: the configuration virt-operator creates, its two webhooks and their paths. */
export const VIRT_API_MUTATOR = 'virt-api-mutator';
export const VMI_MUTATOR = 'virtualmachineinstances-mutator.kubevirt.io';
export const VM_MUTATOR = 'virtualmachines-mutator.kubevirt.io';
export const VMI_MUTATE_PATH = '/virtualmachineinstances-mutate';
export const VM_MUTATE_PATH = '/virtualmachines-mutate';
export const MIGRATION_MUTATOR = 'migrations-mutator.kubevirt.io';
export const MIGRATION_MUTATE_PATH = '/migration-mutate-create';

/** The object as virt-api's mutator returns it for a CREATE of `resource` (undefined: not one it mutates). */
export function mutateOnCreate(resource: string, object: Record<string, unknown>, kubevirt: KubeVirt | undefined, now: string): Record<string, unknown> | undefined {
  if (resource === 'virtualmachineinstances') return mutateVmiOnCreate(object as unknown as VirtualMachineInstance, { kubevirt, now }) as unknown as Record<string, unknown>;
  if (resource === 'virtualmachines') return mutateVmOnCreate(object as unknown as VirtualMachine, kubevirt) as unknown as Record<string, unknown>;
  if (resource === 'virtualmachineinstancemigrations') return mutateMigrationOnCreate(object);
  return undefined;
}

/**
 * KubeVirt's answer as a JSON patch: the spec, metadata and (for a VMI) status replaced whole.
 * `add` rather than KubeVirt's `replace`: the same on a member that is there, and it also applies
 * where the created object has no status yet.
 */
export function mutationPatch(mutated: Record<string, unknown>): { op: 'add'; path: string; value: unknown }[] {
  return ['spec', 'metadata', 'status'].filter((k) => mutated[k] !== undefined).map((k) => ({ op: 'add' as const, path: `/${k}`, value: mutated[k] }));
}

/** The emulator's hook: reads the (first) KubeVirt CR from the store for the cluster configuration. */
export function virtApiMutatingHook(): MutatingCreateHook {
  return (core, request) => {
    if (request.res.group !== 'kubevirt.io') return undefined;
    if (!['virtualmachineinstances', 'virtualmachines', 'virtualmachineinstancemigrations'].includes(request.res.resource)) return undefined;
    const kvRes = core.registry.byPath('kubevirt.io', 'v1', 'kubevirts');
    const kubevirt = kvRes ? (core.store.scan(kvRes)[0] as unknown as KubeVirt | undefined) : undefined;
    return mutateOnCreate(request.res.resource, request.object, kubevirt, core.clock.isoNow());
  };
}

/** virt-operator's MutatingWebhookConfiguration for the mutators at `url` (see above for the operations). */
export function mutatingWebhookConfiguration(url: string, caPem: string): object {
  const webhook = (name: string, path: string, resource: string) => ({
    name,
    admissionReviewVersions: ['v1'],
    clientConfig: { url: `${url}${path}`, caBundle: Buffer.from(caPem).toString('base64') },
    // UPDATE for VMIs, as KubeVirt's: the mutator puts back status changes by non-KubeVirt users.
    rules: [{ operations: resource === 'virtualmachineinstances' ? ['CREATE', 'UPDATE'] : ['CREATE'], apiGroups: ['kubevirt.io'], apiVersions: ['v1'], resources: [resource], scope: 'Namespaced' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: 10,
    reinvocationPolicy: 'Never',
  });
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: VIRT_API_MUTATOR, labels: { 'kubevirt.io': VIRT_API_MUTATOR, 'app.kubernetes.io/managed-by': 'virt-operator' } },
    webhooks: [webhook(VM_MUTATOR, VM_MUTATE_PATH, 'virtualmachines'), webhook(VMI_MUTATOR, VMI_MUTATE_PATH, 'virtualmachineinstances'), webhook(MIGRATION_MUTATOR, MIGRATION_MUTATE_PATH, 'virtualmachineinstancemigrations')],
  };
}
