/**
 * The one network check the controllers themselves run (reference-vm-vmi-depth §6, KubeVirt's
 * `ValidateCreation` in pkg/network/admitter/discontinued.go): interfaces with a binding that was
 * discontinued in v1.3 — `slirp`, `passt` (the old field, not `passtBinding`), `macvtap`. Every
 * other network rule is virt-api's webhook and is not re-checked here. Pure; used by the VMI
 * controller before it creates the launcher pod and by the VM controller before it creates a VMI.
 */
import type { VirtualMachineInstanceSpec } from '../api/index.ts';

/** A Kubernetes StatusCause, as the admitter reports it. */
export interface StatusCause {
  readonly type: 'FieldValueInvalid';
  readonly message: string;
  readonly field: string;
}

const DISCONTINUED: readonly { readonly binding: 'slirp' | 'passt' | 'macvtap'; readonly message: string }[] = [
  { binding: 'slirp', message: 'Slirp interface support has been discontinued since v1.3' },
  { binding: 'passt', message: 'Passt network binding has been discontinued since v1.3' },
  { binding: 'macvtap', message: 'Macvtap network binding has been discontinued since v1.3' },
];

/** The causes for `spec`'s interfaces, in interface order; empty when the spec passes. */
export function discontinuedBindingCauses(spec: Pick<VirtualMachineInstanceSpec, 'domain'>): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [i, iface] of (spec.domain?.devices?.interfaces ?? []).entries()) {
    for (const d of DISCONTINUED) {
      if (iface[d.binding] !== undefined) out.push({ type: 'FieldValueInvalid', message: d.message, field: `spec.domain.devices.interfaces[${i}].${d.binding}` });
    }
  }
  return out;
}

/**
 * `failed create validation: ` and the causes as Go's `%v` prints a `[]metav1.StatusCause`
 * element (`&StatusCause{Type:…,Message:…,Field:…,}`), joined with newlines: KubeVirt's message,
 * verbatim.
 */
export function createValidationMessage(causes: readonly StatusCause[]): string {
  return `failed create validation: ${causes.map((c) => `&StatusCause{Type:${c.type},Message:${c.message},Field:${c.field},}`).join('\n')}`;
}
