/**
 * Expanding a VM's instance type and preference into the VMI it starts (KubeVirt's `ApplyToVMI`,
 * reference-vm-vmi-depth.md §1.5), pure: the instance type first (any conflict fails the start and
 * applies nothing), then the preference, then the annotations naming both.
 */
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { applyInstancetype, vmiConflictMessage } from '../../../shared/instancetype/apply-instancetype.ts';
import { applyPreference } from '../../../shared/instancetype/apply-preference.ts';
import type { Resolved } from './sync-step.ts';

export type Expanded = { readonly ok: true; readonly vmi: VirtualMachineInstance } | { readonly ok: false; readonly message: string };

/** `vmi` (as built from the template, defaults added) with `resolved` applied. */
export function expandVmi(vmi: VirtualMachineInstance, resolved: Resolved): Expanded {
  const { instancetype, preference } = resolved;
  if (!instancetype && !preference) return { ok: true, vmi };
  let spec = vmi.spec;
  let annotations: Record<string, string> = { ...vmi.metadata?.annotations };
  if (instancetype) {
    const r = applyInstancetype('spec', instancetype.spec, preference?.spec, spec, annotations);
    if (r.conflicts.length > 0) return { ok: false, message: `Failed to apply instancetype: ${vmiConflictMessage(r.conflicts)}` };
    spec = r.spec;
    annotations = r.annotations;
  }
  if (preference) ({ spec, annotations } = applyPreference(preference.spec, spec, annotations));
  if (instancetype) annotations[instancetype.annotation] = instancetype.name;
  if (preference) annotations[preference.annotation] = preference.name;
  return { ok: true, vmi: { ...vmi, metadata: { ...vmi.metadata, annotations }, spec } };
}
