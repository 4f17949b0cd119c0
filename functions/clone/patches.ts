/**
 * The JSON patches a clone hands its restore (reference §3.3), computed from the VM stored in the
 * snapshot content (not the live VM), in KubeVirt's order: interface MACs (the new one, or blanked
 * so the platform assigns one), the SMBIOS serial, VM label and annotation removals, template
 * label and annotation removals, the firmware UUID blanked, then the clone's own `spec.patches`
 * verbatim, last, so they win. One JSON string per operation.
 */
import { escapeJsonPointer } from '../../shared/kube/client.ts';
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';
import { keysToRemove } from './filters.ts';
import { LAST_RESTORE_UID_ANNOTATION } from './names.ts';

/** The parts of the content's VM the patches read. */
export interface PatchSourceVm {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: {
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: { domain?: { devices?: { interfaces?: { name?: string }[] }; firmware?: Record<string, unknown> } };
    };
  };
}

/** A JSON-pointer token (RFC 6901): `~` → `~0`, `/` → `~1`. */
export const escapePointer = escapeJsonPointer;

// Field order as Go marshals its patch struct: op, path, value. Removals keep `"value":null`
// (KubeVirt marshals the plain struct there, reference §3.3).
const replace = (path: string, value: unknown) => JSON.stringify({ op: 'replace', path, value });
const remove = (path: string) => JSON.stringify({ op: 'remove', path, value: null });
const removals = (prefix: string, keys: readonly string[]) => keys.map((k) => remove(`${prefix}/${escapePointer(k)}`));

/** `restore.spec.patches` for `clone` restoring `vm`. */
export function clonePatches(clone: VirtualMachineClone, vm: PatchSourceVm): string[] {
  const spec = clone.spec ?? {};
  const domain = vm.spec?.template?.spec?.domain;
  const firmware = domain?.firmware !== undefined && domain.firmware !== null;
  const out: string[] = [];
  (domain?.devices?.interfaces ?? []).forEach((iface, i) => {
    out.push(replace(`/spec/template/spec/domain/devices/interfaces/${i}/macAddress`, spec.newMacAddresses?.[iface.name ?? ''] ?? ''));
  });
  if (firmware) out.push(replace('/spec/template/spec/domain/firmware/serial', spec.newSMBiosSerial ?? ''));
  out.push(...removals('/metadata/labels', keysToRemove(vm.metadata?.labels, spec.labelFilters)));
  out.push(...removals('/metadata/annotations', keysToRemove(vm.metadata?.annotations, spec.annotationFilters, [LAST_RESTORE_UID_ANNOTATION])));
  out.push(...removals('/spec/template/metadata/labels', keysToRemove(vm.spec?.template?.metadata?.labels, spec.template?.labelFilters)));
  // No exemption at template level (quirk Q-C5).
  out.push(...removals('/spec/template/metadata/annotations', keysToRemove(vm.spec?.template?.metadata?.annotations, spec.template?.annotationFilters)));
  if (firmware) out.push(replace('/spec/template/spec/domain/firmware/uuid', ''));
  out.push(...(spec.patches ?? []));
  return out;
}
