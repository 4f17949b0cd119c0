/**
 * Expanding a VM's instance type and preference into the VM's own spec (KubeVirt's `Expand`, the
 * `expand` / `expandAll` reference policies, reference-vm-vmi-depth.md §1.6), pure: on a copy,
 * a disk for every volume and the default pod interface first (so the preference reaches them),
 * then the instance type and the preference into `spec.template.spec` (paths
 * `spec.template.spec…`; any conflict fails and nothing is applied), then the cluster's VMI spec
 * defaults, and last the matchers and the status refs dropped: the VM no longer names them.
 */
import type { VirtualMachine } from '../api/index.ts';
import { InvalidInputError } from '../errors.ts';
import { applyInstancetype, vmConflictMessage } from './apply-instancetype.ts';
import { applyPreference } from './apply-preference.ts';
import type { ClusterConfig } from '../config/cluster-config.ts';
import { vmiSpecDefaults, withDefaultDisksAndInterface } from '../template/vmi-defaults.ts';
import type { Resolved } from './find.ts';

export type ExpandedVm = { readonly ok: true; readonly vm: VirtualMachine } | { readonly ok: false; readonly message: string };

/** `vm` with `resolved` (what its matchers resolved to) written into its template. Never mutates its input. */
export function expandVm(vm: VirtualMachine, resolved: Resolved, config: ClusterConfig): ExpandedVm {
  if (!vm.spec.instancetype && !vm.spec.preference) return { ok: true, vm };
  const template = vm.spec.template;
  const before = template.metadata?.annotations;
  let annotations: Record<string, string> = { ...before };
  let spec;
  try {
    spec = withDefaultDisksAndInterface(template.spec ?? { domain: { devices: {} } }, config);
    if (resolved.instancetype) {
      const r = applyInstancetype('spec.template.spec', resolved.instancetype.spec, resolved.preference?.spec, spec, annotations);
      if (r.conflicts.length > 0) return { ok: false, message: vmConflictMessage(r.conflicts) };
      ({ spec, annotations } = r);
    }
    if (resolved.preference) ({ spec, annotations } = applyPreference(resolved.preference.spec, spec, annotations));
    // After the instance type, so that the defaults (topology, guest memory) never conflict with it.
    spec = vmiSpecDefaults(spec, config);
  } catch (err) {
    // The cluster's default interface cannot be used (bridge not permitted, slirp).
    if (err instanceof InvalidInputError) return { ok: false, message: err.message };
    throw err;
  }
  const out = structuredClone(vm);
  out.spec.template.spec = spec;
  // An annotation map appears only when the instance type or preference brought one.
  if (before !== undefined || Object.keys(annotations).length > 0) out.spec.template.metadata = { ...template.metadata, annotations };
  delete out.spec.instancetype;
  delete out.spec.preference;
  if (out.status) {
    delete out.status.instancetypeRef;
    delete out.status.preferenceRef;
  }
  return { ok: true, vm: out };
}
