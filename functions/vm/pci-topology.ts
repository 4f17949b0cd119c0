/**
 * KubeVirt's PCI topology annotation sync (`syncPCITopologyAnnotationsToVM`,
 * reference-vm-vmi-depth §7), pure: virt-handler marks a VMI whose PCI topology it detected as a
 * later version with `kubevirt.io/pci-topology-version` (and the frozen placeholder count in
 * `kubevirt.io/pci-interface-slot-count`); copied into the VM template, they give the VM's next
 * VMIs the same topology. Only while the template has no version of its own: once it has one the
 * VM owns it.
 */
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { PCI_INTERFACE_SLOT_COUNT_ANNOTATION, PCI_TOPOLOGY_VERSION_ANNOTATION } from './well-known.ts';

/**
 * The template annotations after the copy, as a JSON patch (`test` of the map as read, then
 * `replace`, or `add` of the map — or of the template metadata — when there is none); undefined
 * when nothing is to copy.
 */
export function pciTopologyPatch(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): JsonPatchOperation[] | undefined {
  const version = vmi?.metadata?.annotations?.[PCI_TOPOLOGY_VERSION_ANNOTATION];
  if (!version) return undefined;
  const meta = vm.spec.template.metadata;
  const before = meta?.annotations;
  if (before?.[PCI_TOPOLOGY_VERSION_ANNOTATION]) return undefined;
  const after: Record<string, string> = { ...before, [PCI_TOPOLOGY_VERSION_ANNOTATION]: version };
  const count = vmi.metadata?.annotations?.[PCI_INTERFACE_SLOT_COUNT_ANNOTATION];
  if (count !== undefined) after[PCI_INTERFACE_SLOT_COUNT_ANNOTATION] = count;
  if (meta === undefined) return [{ op: 'test', path: '/spec/template/metadata', value: null }, { op: 'add', path: '/spec/template/metadata', value: { annotations: after } }];
  const path = '/spec/template/metadata/annotations';
  if (before === undefined) return [{ op: 'test', path, value: null }, { op: 'add', path, value: after }];
  return [{ op: 'test', path, value: before }, { op: 'replace', path, value: after }];
}
