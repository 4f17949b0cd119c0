/**
 * The VMs a pool writes (reference §2.3, §2.5): a new VM at an index, and the opportunistic
 * update of an outdated VM. Both are the template's metadata and indexed spec, stamped with the
 * revision label on the VM and on its VMI template; pure.
 */
import type { VirtualMachine, VirtualMachinePool, VirtualMachineSpec } from '../../shared/api/index.ts';
import { KIND_VM, KUBEVIRT_API_VERSION } from '../../shared/api/well-known.ts';
import { controllerRef } from '../../shared/predicates/owner-refs.ts';
import { indexedVmSpec } from './indexing.ts';
import { indexOf } from './names.ts';
import { KIND_POOL, POOL_API_VERSION, POOL_FINALIZER, REVISION_LABEL } from './well-known.ts';

/** The controller reference a pool puts on its VMs and revisions. */
export function poolOwnerRef(pool: VirtualMachinePool) {
  return controllerRef(POOL_API_VERSION, KIND_POOL, pool);
}

/** Labels, annotations and spec of index `index` at `revision` (the template's `metadata.name` is ignored). */
function rendered(pool: VirtualMachinePool, index: number, revision: string): { labels: Record<string, string>; annotations: Record<string, string> | undefined; spec: VirtualMachineSpec } {
  const meta = pool.spec.virtualMachineTemplate.metadata;
  const spec = indexedVmSpec(pool, index);
  spec.template = { ...spec.template, metadata: { ...spec.template?.metadata, labels: { ...spec.template?.metadata?.labels, [REVISION_LABEL]: revision } } };
  const annotations = meta?.annotations ? { ...meta.annotations } : undefined;
  return { labels: { ...meta?.labels, [REVISION_LABEL]: revision }, annotations, spec };
}

/** A new VM `name` (index `index`) of `pool` at `revision`. */
export function renderVm(pool: VirtualMachinePool, name: string, index: number, revision: string): VirtualMachine {
  const r = rendered(pool, index, revision);
  return {
    apiVersion: KUBEVIRT_API_VERSION,
    kind: KIND_VM,
    metadata: {
      name,
      namespace: pool.metadata?.namespace ?? '',
      labels: r.labels,
      ...(r.annotations ? { annotations: r.annotations } : {}),
      finalizers: [POOL_FINALIZER],
      ownerReferences: [poolOwnerRef(pool)],
    },
    spec: r.spec,
  };
}

/**
 * The opportunistic update of `vm` to `revision`: labels, annotations and spec are replaced
 * wholesale by the template's (edits made on the VM are lost, as upstream), except the firmware
 * `uuid` and `serial` the old VM had, which keep the guest's identity. Finalizers, owner
 * references, status and resourceVersion stay as read (the update is conditional on the latter).
 */
export function renderUpdatedVm(pool: VirtualMachinePool, vm: VirtualMachine, revision: string): VirtualMachine {
  const r = rendered(pool, indexOf(vm.metadata?.name ?? ''), revision);
  const out = structuredClone(vm);
  out.metadata = { ...out.metadata, labels: r.labels };
  if (r.annotations) out.metadata.annotations = r.annotations;
  else delete out.metadata.annotations;
  out.spec = r.spec;
  const old = vm.spec.template?.spec?.domain?.firmware;
  if (old?.uuid || old?.serial) {
    const domain = out.spec.template?.spec?.domain;
    if (domain) {
      const firmware = { ...domain.firmware };
      if (old.uuid) firmware.uuid = old.uuid;
      if (old.serial) firmware.serial = old.serial;
      domain.firmware = firmware;
    }
  }
  return out;
}
