/**
 * The VM reconcile's memory-dump step (reference-vm-vmi-depth §7): carries out
 * {@link planMemoryDump} — the template's and the VMI's volume lists (tested JSON patches), the
 * claim's `kubevirt.io/memory-dump` annotation — and hands the next request to the status write.
 * virt-api's `memorydump` subresource, which writes the request (`virtctl memory-dump get`), is not
 * served here: a user writes `status.memoryDumpRequest` (docs/vm-controller.md).
 */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineMemoryDumpRequest, Volume } from '../../../shared/api/index.ts';
import { PVCS, VMIS, VMS } from '../../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import type { VmDeps } from '../deps.ts';
import type { SyncError } from '../sync.ts';
import { MEMORY_DUMP_ANNOTATION, planMemoryDump } from './decide.ts';
import { errorText } from '../../../shared/errors.ts';

export interface MemoryDumpResult {
  readonly vm: VirtualMachine;
  readonly vmi: VirtualMachineInstance | undefined;
  /** The request for the status write: unchanged when undefined, `null` to drop it. */
  readonly request?: VirtualMachineMemoryDumpRequest | null;
  readonly error?: SyncError;
}

function listOps(path: string, before: Volume[] | undefined, after: Volume[]): JsonPatchOperation[] {
  if (before === undefined || before.length === 0) return [{ op: 'test', path, value: before ?? null }, { op: 'add', path, value: after }];
  return [{ op: 'test', path, value: before }, { op: 'replace', path, value: after }];
}

/** Runs the step (a VM not being deleted). */
export async function syncMemoryDump(vmIn: VirtualMachine, vmiIn: VirtualMachineInstance | undefined, deps: VmDeps): Promise<MemoryDumpResult> {
  let vm = vmIn;
  let vmi = vmiIn;
  const plan = planMemoryDump(vm, vmi);
  if (!plan) return { vm, vmi };
  const ns = vm.metadata?.namespace ?? '';
  try {
    if (plan.vmiVolumes && vmi) vmi = await deps.kube.patch(VMIS, ns, vmi.metadata?.name ?? '', { type: 'json', ops: listOps('/spec/volumes', vmi.spec.volumes, plan.vmiVolumes) });
    if (plan.templateVolumes) vm = await deps.kube.patch(VMS, ns, vm.metadata?.name ?? '', { type: 'json', ops: listOps('/spec/template/spec/volumes', vm.spec.template.spec?.volumes, plan.templateVolumes) });
    if (plan.annotate) {
      const pvc = await deps.kube.get(PVCS, ns, plan.annotate.claimName);
      if (pvc && pvc.metadata?.annotations?.[MEMORY_DUMP_ANNOTATION] !== plan.annotate.value) {
        await deps.kube.patch(PVCS, ns, plan.annotate.claimName, { type: 'merge', body: { metadata: { annotations: { [MEMORY_DUMP_ANNOTATION]: plan.annotate.value } } } });
      }
    }
  } catch (err) {
    return { vm, vmi, error: { reason: 'MemoryDumpError', message: `Error encountered while handling memory dump request: ${errorText(err)}`, requeue: true } };
  }
  return { vm, vmi, request: plan.request ?? null };
}
