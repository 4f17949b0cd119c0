/**
 * The VMI's `kubevirt.io/vm-generation` annotation follows the VM's generation while the VM's
 * template still equals the one the VMI was started from (a change outside the template: the run
 * strategy, a label on the VM): KubeVirt's `conditionallyBumpGenerationAnnotationOnVmi`. It runs
 * early in every pass whose expectations are satisfied and whose VM is not being deleted — before
 * the run-strategy step, for any VMI, final or terminating too — so a VM halted by a change of its
 * run strategy reports that generation as observed (`status.observedGeneration`, update-status.ts)
 * while its VMI stops. One JSON patch that tests and replaces the whole annotation map.
 */
import { isDeepStrictEqual } from 'node:util';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineSpec } from '../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VMIS } from '../../shared/api/resources.ts';
import type { VmDeps } from './deps.ts';
import { VM_GENERATION_ANNOTATION } from './well-known.ts';

/** The generation suffix of a start revision name (`revision-start-vm-<uid>-<generation>`). */
export function revisionGeneration(name: string | undefined): number | undefined {
  const n = Number(name?.slice(name.lastIndexOf('-') + 1));
  return name && Number.isInteger(n) ? n : undefined;
}

/** The spec the VMI was started from: the VM's own at the same generation, else its start revision's (undefined when that is gone). */
export async function startSpecOf(vm: VirtualMachine, vmi: VirtualMachineInstance, deps: Pick<VmDeps, 'kube'>): Promise<VirtualMachineSpec | undefined> {
  if (revisionGeneration(vmi.status?.virtualMachineRevisionName) === vm.metadata?.generation) return vm.spec;
  const name = vmi.status?.virtualMachineRevisionName;
  const rev = name ? await deps.kube.get(CONTROLLER_REVISIONS, vm.metadata?.namespace ?? '', name) : undefined;
  return (rev?.data as { spec?: VirtualMachineSpec } | undefined)?.spec;
}

/**
 * Bumps the annotation when it lags the VM's generation and the template is the start revision's.
 * Returns the VMI as it is after the pass (patched or not) and the start spec when it was read.
 */
export async function syncGenerationAnnotation(
  vm: VirtualMachine,
  vmi: VirtualMachineInstance,
  deps: Pick<VmDeps, 'kube'>,
): Promise<{ vmi: VirtualMachineInstance; startSpec?: VirtualMachineSpec | undefined }> {
  const generation = String(vm.metadata?.generation ?? '');
  const annotations = vmi.metadata?.annotations ?? {};
  if (generation === '' || annotations[VM_GENERATION_ANNOTATION] === generation) return { vmi };
  const startSpec = await startSpecOf(vm, vmi, deps);
  if (startSpec === undefined || !isDeepStrictEqual(startSpec.template, vm.spec.template)) return { vmi, startSpec };
  const ops = [
    { op: 'test' as const, path: '/metadata/annotations', value: annotations },
    { op: 'replace' as const, path: '/metadata/annotations', value: { ...annotations, [VM_GENERATION_ANNOTATION]: generation } },
  ];
  return { vmi: await deps.kube.patch(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { type: 'json', ops }), startSpec };
}
