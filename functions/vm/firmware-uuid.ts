/**
 * KubeVirt's firmware UUID synchroniser (reference-vm-vmi-depth §7), pure: a VM whose template
 * names no firmware UUID gets the one its VMIs are started with (UUIDv5 of the VM name,
 * {@link firmwareUuid}) written into `spec.template.spec.domain.firmware`, so that the spec says
 * it. A running VMI already has that UUID, so the write needs no restart (restart-required.ts
 * neutralises a UUID the VMI already has).
 */
import type { VirtualMachine } from '../../shared/api/index.ts';
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { firmwareUuid } from './vmi-from-vm.ts';

const FIRMWARE_PATH = '/spec/template/spec/domain/firmware';

/** The VM JSON patch: `test` the firmware as read (null when absent), `add` it with the UUID; undefined when it has one. */
export function firmwareUuidPatch(vm: VirtualMachine): JsonPatchOperation[] | undefined {
  const spec = vm.spec.template.spec;
  if (!spec) return undefined;
  const firmware = spec.domain.firmware;
  if (firmware?.uuid) return undefined;
  return [
    { op: 'test', path: FIRMWARE_PATH, value: firmware ?? null },
    { op: 'add', path: FIRMWARE_PATH, value: { ...firmware, uuid: firmwareUuid(vm) } },
  ];
}
