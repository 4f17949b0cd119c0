/**
 * Which object a matcher names (KubeVirt's `find/spec.go` and its preference twin,
 * reference-vm-vmi-depth.md §1.2), pure: the lowercased `kind` picks the namespaced or the
 * cluster resource; an empty kind means the cluster one.
 */
import type { Resource, VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from '../api/index.ts';
import { CLUSTER_INSTANCETYPES, CLUSTER_PREFERENCES, INSTANCETYPES, PREFERENCES, resourceName } from '../api/resources.ts';
import {
  CLUSTER_INSTANCETYPE_ANNOTATION,
  CLUSTER_PREFERENCE_ANNOTATION,
  INSTANCETYPE_ANNOTATION,
  KIND_CLUSTER_INSTANCETYPE,
  KIND_CLUSTER_PREFERENCE,
  KIND_INSTANCETYPE,
  KIND_PREFERENCE,
  PREFERENCE_ANNOTATION,
} from '../instancetype/well-known.ts';

/** Instance type or preference: the two halves of every step. */
export type Flavour = 'instancetype' | 'preference';

/** An instance type or preference object as read (either scope). */
export interface FlavourObject<S> {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; generation?: number; [k: string]: unknown };
  spec: S;
}
export type AnyFlavourObject = FlavourObject<VirtualMachineInstancetypeSpec> | FlavourObject<VirtualMachinePreferenceSpec>;

/** How a matcher's kind resolves. */
export type KindTarget =
  | { readonly ok: true; readonly res: Resource<AnyFlavourObject>; readonly kind: string; readonly namespaced: boolean; readonly annotation: string }
  | { readonly ok: false; readonly message: string };

const TABLE: Record<Flavour, { namespaced: Resource<AnyFlavourObject>; cluster: Resource<AnyFlavourObject>; kinds: [string, string]; annotations: [string, string]; matcher: string }> = {
  instancetype: {
    namespaced: INSTANCETYPES as Resource<AnyFlavourObject>,
    cluster: CLUSTER_INSTANCETYPES as Resource<AnyFlavourObject>,
    kinds: [KIND_INSTANCETYPE, KIND_CLUSTER_INSTANCETYPE],
    annotations: [INSTANCETYPE_ANNOTATION, CLUSTER_INSTANCETYPE_ANNOTATION],
    matcher: 'InstancetypeMatcher',
  },
  preference: {
    namespaced: PREFERENCES as Resource<AnyFlavourObject>,
    cluster: CLUSTER_PREFERENCES as Resource<AnyFlavourObject>,
    kinds: [KIND_PREFERENCE, KIND_CLUSTER_PREFERENCE],
    annotations: [PREFERENCE_ANNOTATION, CLUSTER_PREFERENCE_ANNOTATION],
    matcher: 'PreferenceMatcher',
  },
};

/** The resource a matcher of `flavour` with `kind` names (singular or plural, any case; empty = cluster). */
export function kindTarget(flavour: Flavour, kind: string | undefined): KindTarget {
  const t = TABLE[flavour];
  const k = (kind ?? '').toLowerCase();
  const [nsKind, clusterKind] = t.kinds;
  if (k === nsKind.toLowerCase() || k === `${nsKind.toLowerCase()}s`) return { ok: true, res: t.namespaced, kind: nsKind, namespaced: true, annotation: t.annotations[0] };
  if (k === '' || k === clusterKind.toLowerCase() || k === `${clusterKind.toLowerCase()}s`) {
    return { ok: true, res: t.cluster, kind: clusterKind, namespaced: false, annotation: t.annotations[1] };
  }
  return { ok: false, message: `got unexpected kind in ${t.matcher}: ${kind ?? ''}` };
}

/** The API server's NotFound text for `name` of `res` (what KubeVirt reports as the lookup error). */
export function notFoundMessage(res: Resource<unknown>, name: string): string {
  return `${resourceName(res)} "${name}" not found`;
}
