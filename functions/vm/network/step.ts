/**
 * The VM reconcile's network step (NIC hotplug, reference-vm-vmi-depth §5): carries out
 * {@link planInterfaceSync}. The VMI gets one JSON patch that tests and adds both lists
 * (`/spec/networks`, `/spec/domain/devices/interfaces`), as KubeVirt writes it; the template loses
 * its unplugged `absent` interfaces by a tested patch of its two lists. The VMI controller then
 * rewrites the launcher pod's Multus annotation and virt-handler plugs the NIC (docs/vmi-controller.md).
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { VMIS, VMS } from '../../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import type { VmDeps } from '../deps.ts';
import type { SyncError } from '../sync.ts';
import { planInterfaceSync, type NetSpec } from './interfaces-sync.ts';
import { errorText } from '../../../shared/errors.ts';

export interface NetworkSyncResult {
  readonly vm: VirtualMachine;
  readonly vmi: VirtualMachineInstance | undefined;
  readonly error?: SyncError;
}

/** `test` the list read, then `add` the new one (which replaces it), or `remove` it when emptied. */
function listOps(path: string, before: readonly unknown[] | undefined, after: readonly unknown[]): JsonPatchOperation[] {
  if (after.length === 0) return before === undefined ? [] : [{ op: 'test', path, value: before }, { op: 'remove', path }];
  return [{ op: 'test', path, value: before ?? null }, { op: 'add', path, value: after }];
}

function vmiOps(vmi: VirtualMachineInstance, next: NetSpec): JsonPatchOperation[] {
  return [...listOps('/spec/networks', vmi.spec.networks, next.networks), ...listOps('/spec/domain/devices/interfaces', vmi.spec.domain.devices.interfaces, next.interfaces)];
}

function templateOps(vm: VirtualMachine, next: NetSpec): JsonPatchOperation[] {
  const t = vm.spec.template.spec;
  return [...listOps('/spec/template/spec/networks', t?.networks, next.networks), ...listOps('/spec/template/spec/domain/devices/interfaces', t?.domain.devices.interfaces, next.interfaces)];
}


/** Runs the step (expectations satisfied, the VM not being deleted); `vmi` is the VM's own, if any. */
export async function syncNetworks(vmIn: VirtualMachine, vmiIn: VirtualMachineInstance | undefined, deps: VmDeps): Promise<NetworkSyncResult> {
  let vm = vmIn;
  let vmi = vmiIn;
  const plan = planInterfaceSync(vm, vmi);
  const ns = vm.metadata?.namespace ?? '';
  if (plan.vmi && vmi) {
    try {
      vmi = await deps.kube.patch(VMIS, ns, vmi.metadata?.name ?? '', { type: 'json', ops: vmiOps(vmi, plan.vmi) });
    } catch (err) {
      return { vm, vmi, error: { reason: 'HotPlugNetworkInterfaceError', message: `error encountered when trying to patch vmi: ${errorText(err)}`, requeue: true } };
    }
  }
  if (plan.template) {
    try {
      vm = await deps.kube.patch(VMS, ns, vm.metadata?.name ?? '', { type: 'json', ops: templateOps(vm, plan.template) });
    } catch (err) {
      // KubeVirt writes the template with the pass's one VM update, and reports its failure so.
      return { vm, vmi, error: { reason: 'FailedUpdateError', message: `Error encountered when trying to update vm according to add volume and/or memory dump requests: ${errorText(err)}`, requeue: true } };
    }
  }
  return { vm, vmi };
}
