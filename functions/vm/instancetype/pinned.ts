/**
 * The instance type and preference a start spec was started with (reference-vm-vmi-depth §1.5,
 * §1.7): the start revision stores the VM spec with `spec.instancetype.revisionName` /
 * `spec.preference.revisionName` filled from the status refs, and `syncRestartRequired` expands
 * the last-started spec with those revisions (the current VM is expanded with its status refs).
 */
import type { VirtualMachine, VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec, VirtualMachineSpec } from '../../../shared/api/index.ts';
import { CONTROLLER_REVISIONS } from '../../../shared/api/resources.ts';
import type { VmDeps } from '../deps.ts';
import { kindTarget, type Flavour } from '../../../shared/instancetype/kinds.ts';
import { decodeRevision } from '../../../shared/instancetype/revision.ts';
import { REF_FIELD, type Resolved, type ResolvedFlavour } from './sync-step.ts';

/** `spec` with each matcher's `revisionName` filled from the VM's status ref (a user's own one is kept). Pure. */
export function pinRevisionNames(spec: VirtualMachineSpec, status: VirtualMachine['status']): VirtualMachineSpec {
  const out = structuredClone(spec);
  for (const f of ['instancetype', 'preference'] as const) {
    const matcher = out[f];
    const name = status?.[REF_FIELD[f]]?.controllerRevisionRef?.name;
    if (matcher && !matcher.revisionName && name) matcher.revisionName = name;
  }
  return out;
}

/**
 * What `startSpec` expands with: for each matcher its pinned revision (read, unless it is the
 * revision this pass resolved already), or — a start revision written before revisions were
 * pinned — what this pass resolved. Undefined when a revision is missing or does not decode
 * (then no RestartRequired decision is taken this pass).
 */
export async function resolvePinned(startSpec: VirtualMachineSpec, vm: VirtualMachine, resolved: Resolved, deps: VmDeps): Promise<Resolved | undefined> {
  const out: { instancetype?: ResolvedFlavour<VirtualMachineInstancetypeSpec>; preference?: ResolvedFlavour<VirtualMachinePreferenceSpec> } = {};
  for (const f of ['instancetype', 'preference'] as const satisfies readonly Flavour[]) {
    const matcher = startSpec[f];
    if (!matcher) continue;
    const name = matcher.revisionName;
    const current = vm.status?.[REF_FIELD[f]]?.controllerRevisionRef?.name;
    if (!name || (name === current && resolved[f])) {
      if (resolved[f]) (out as Record<Flavour, unknown>)[f] = resolved[f];
      continue;
    }
    const target = kindTarget(f, matcher.kind);
    if (!target.ok) return undefined;
    const cr = await deps.kube.get(CONTROLLER_REVISIONS, vm.metadata?.namespace ?? '', name);
    if (!cr) return undefined;
    const decoded = decodeRevision(cr, f);
    if (!decoded.ok) return undefined;
    (out as Record<Flavour, unknown>)[f] = { name: matcher.name ?? '', annotation: target.annotation, spec: decoded.object.spec };
  }
  return out;
}
