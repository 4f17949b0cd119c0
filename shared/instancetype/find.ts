/**
 * Finding what a VM's instance type and preference matchers name (KubeVirt's `find/spec.go` and
 * `find/revision.go`, reference-vm-vmi-depth.md §1.2): the revision the matcher's `revisionName`
 * names, else the one the VM's status ref pins (when it stores the named object), else the live
 * object. Read-only; shared by the VM controller (before storing and expanding) and the export
 * controller (the VM manifest it serves is the expanded VM).
 */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type {
  InstancetypeMatcher,
  InstancetypeStatusRef,
  VirtualMachine,
  VirtualMachineInstancetypeSpec,
  VirtualMachinePreferenceSpec,
} from '../api/index.ts';
import { CONTROLLER_REVISIONS } from '../api/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { kindTarget, notFoundMessage, type AnyFlavourObject, type Flavour } from './kinds.ts';
import { decodeRevision } from './revision.ts';
import { OBJECT_NAME_LABEL } from './well-known.ts';

/** One resolved matcher: what to expand, and how the VMI names it. */
export interface ResolvedFlavour<S> {
  readonly name: string;
  /** The VMI annotation naming it (`kubevirt.io/instancetype-name`, `…/cluster-…`). */
  readonly annotation: string;
  readonly spec: S;
}

/** What a VM's matchers resolved to. */
export interface Resolved {
  readonly instancetype?: ResolvedFlavour<VirtualMachineInstancetypeSpec>;
  readonly preference?: ResolvedFlavour<VirtualMachinePreferenceSpec>;
}

/** What find resolved for one matcher, and the revision it read (for an upgrade). */
export interface Found {
  readonly object: AnyFlavourObject;
  readonly kind: string;
  readonly annotation: string;
  readonly live: boolean;
  readonly revision?: V1ControllerRevision;
}

/** A matcher that names nothing usable: the message is KubeVirt's (the API's NotFound text, an unexpected kind, a bad revision). */
export class FindError extends Error {}

export const FLAVOURS: readonly Flavour[] = ['instancetype', 'preference'];
export const REF_FIELD = { instancetype: 'instancetypeRef', preference: 'preferenceRef' } as const;

type FindKube = Pick<KubeClient, 'get'>;

/** Revision first (the matcher's `revisionName`, else the status ref's if it names this object), else the live object. */
export async function findFlavour(kube: FindKube, f: Flavour, matcher: InstancetypeMatcher, ref: InstancetypeStatusRef | undefined, vm: VirtualMachine): Promise<Found> {
  const ns = vm.metadata?.namespace ?? '';
  const target = kindTarget(f, matcher.kind);
  if (!target.ok) throw new FindError(target.message);
  const readRevision = async (name: string): Promise<V1ControllerRevision> => {
    const cr = await kube.get(CONTROLLER_REVISIONS, ns, name);
    if (!cr) throw new FindError(notFoundMessage(CONTROLLER_REVISIONS, name));
    return cr;
  };
  const fromRevision = (cr: V1ControllerRevision): Found => {
    const decoded = decodeRevision(cr, f);
    if (!decoded.ok) throw new FindError(decoded.message);
    return { object: decoded.object, kind: target.kind, annotation: target.annotation, live: false, revision: cr };
  };
  if (matcher.revisionName) return fromRevision(await readRevision(matcher.revisionName));
  const pinned = ref?.controllerRevisionRef?.name;
  if (pinned) {
    const cr = await readRevision(pinned);
    if (cr.metadata?.labels?.[OBJECT_NAME_LABEL] === matcher.name) return fromRevision(cr);
  }
  return findLiveFlavour(kube, f, matcher, vm);
}

/** The live instance type or preference object a matcher names. */
export async function findLiveFlavour(kube: FindKube, f: Flavour, matcher: InstancetypeMatcher, vm: VirtualMachine): Promise<Found> {
  const target = kindTarget(f, matcher.kind);
  if (!target.ok) throw new FindError(target.message);
  const name = matcher.name ?? '';
  const obj = await kube.get(target.res, target.namespaced ? (vm.metadata?.namespace ?? '') : undefined, name);
  if (!obj) throw new FindError(notFoundMessage(target.res, name));
  return { object: obj, kind: target.kind, annotation: target.annotation, live: true };
}

/** What find resolved, as a start and an expansion take it. */
export function resolvedOf(vm: VirtualMachine, found: Partial<Record<Flavour, Found>>): Resolved {
  const resolved: { instancetype?: ResolvedFlavour<VirtualMachineInstancetypeSpec>; preference?: ResolvedFlavour<VirtualMachinePreferenceSpec> } = {};
  const it = found.instancetype;
  if (it) resolved.instancetype = { name: vm.spec.instancetype?.name ?? '', annotation: it.annotation, spec: it.object.spec as VirtualMachineInstancetypeSpec };
  const pref = found.preference;
  if (pref) resolved.preference = { name: vm.spec.preference?.name ?? '', annotation: pref.annotation, spec: pref.object.spec as VirtualMachinePreferenceSpec };
  return resolved;
}

/** Finds both matchers of `vm` (read-only); a {@link FindError} names what could not be found. */
export async function findFlavours(kube: FindKube, vm: VirtualMachine): Promise<Resolved> {
  const found: Partial<Record<Flavour, Found>> = {};
  for (const f of FLAVOURS) {
    const matcher = vm.spec[f];
    if (matcher) found[f] = await findFlavour(kube, f, matcher, vm.status?.[REF_FIELD[f]], vm);
  }
  return resolvedOf(vm, found);
}
