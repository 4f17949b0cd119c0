/**
 * virt-api's VirtualMachine mutating webhook on CREATE (KubeVirt
 * `pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator.go` and `SetVirtualMachineDefaults`),
 * as a pure step the sandbox applies to every VM created on either lane: a template without a
 * firmware UUID or serial gets random ones (so no controller needs to write a UUID into the VM,
 * which would make the VM's generation 2 before its first start), the template's architecture and
 * machine type are defaulted, and a PCIe template gets the PCI topology version `v3` annotation.
 *
 * Not applied: the instance type mutator (`inferFromVolume` and the default instance type labels),
 * the architecture read from a DataSource's `template.kubevirt.io/architecture` label, and the
 * UPDATE pass (architecture and machine type again on every VM update; a VM created here already
 * has both) — docs/fidelity.md, R-L5.
 */
import { randomUUID } from 'node:crypto';
import type { KubeVirt, VirtualMachine } from '../../shared/api/index.ts';
import { archSettings, clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import { supportsPcieHotplug, withPciTopologyVersion } from './vmi-mutation.ts';

/** The VM as virt-api's webhook returns it for a CREATE of `input` (a copy). */
export function mutateVmOnCreate(input: VirtualMachine, kubevirt: KubeVirt | undefined, newUuid: () => string = randomUUID): VirtualMachine {
  const vm = structuredClone(input);
  // A VM being deleted is left alone; one without a template is the validating webhook's to refuse.
  if (vm.metadata?.deletionTimestamp || !vm.spec?.template?.spec?.domain) return vm;
  const config = clusterConfigFromKubeVirt(kubevirt);
  const template = vm.spec.template;
  const spec = template.spec!;
  const firmware = (spec.domain.firmware ??= {});
  if (!firmware.uuid) firmware.uuid = newUuid();
  if (!firmware.serial) firmware.serial = newUuid();
  spec.architecture ||= config.defaultArchitecture;
  spec.domain.machine ??= {};
  spec.domain.machine.type ||= archSettings(config, spec.architecture).machineType;
  if (supportsPcieHotplug(spec)) {
    template.metadata ??= {};
    template.metadata.annotations = withPciTopologyVersion(template.metadata.annotations);
  }
  return vm;
}
