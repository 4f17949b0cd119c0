/**
 * Owner references as KubeVirt's controller-ref manager reads and writes them
 * (reference-replicas-pools-clones.md §0): who controls an object, the reference a controller
 * puts on what it creates, and the adopt / release patches.
 *
 * Upstream's adopt patch replaces the whole `ownerReferences` list with the controller's one and
 * its release patch empties the list, dropping owner references that other owners put there. Ours
 * keep every reference that is not the controller's own: the list is sent whole (merge patches
 * replace arrays), guarded by the object's `uid`.
 */
import type { Patch } from '../kube/client.ts';

/** One owner reference, as objects carry them. */
export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The part of an object's metadata owner references live in. */
export interface Owned {
  metadata?: {
    uid?: string | undefined;
    ownerReferences?: readonly OwnerReferenceLike[] | undefined;
  } | undefined;
}

/** A controller owner reference: `controller: true, blockOwnerDeletion: true`. */
export interface ControllerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: true;
  readonly blockOwnerDeletion: true;
}

/** The object's controller reference (`controller: true`), if any. */
export function controllerOf(obj: Owned): OwnerReferenceLike | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** True when the object's controller reference carries `uid`. */
export function isControlledByUid(obj: Owned, uid: string | undefined): boolean {
  return uid !== undefined && controllerOf(obj)?.uid === uid;
}

/** The reference a controller of `kind` puts on what it creates or adopts. */
export function controllerRef(apiVersion: string, kind: string, owner: { metadata?: { name?: string; uid?: string } | undefined }): ControllerRef {
  return { apiVersion, kind, name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/**
 * Adoption: a merge patch that adds the controller's reference to the object's other (non-controller)
 * references, guarded by the object's `uid` (a recreated object of the same name does not match).
 */
export function adoptPatch(obj: Owned, ref: ControllerRef): Patch {
  const others = (obj.metadata?.ownerReferences ?? []).filter((r) => r.uid !== ref.uid);
  return { type: 'merge', body: { metadata: { ownerReferences: [...others, ref], uid: obj.metadata?.uid ?? '' } } };
}

/**
 * Release: a merge patch that removes the controller's own reference (by `controllerUid`) and keeps
 * the others, guarded by the object's `uid`.
 */
export function releasePatch(obj: Owned, controllerUid: string): Patch {
  const others = (obj.metadata?.ownerReferences ?? []).filter((r) => r.uid !== controllerUid);
  return { type: 'merge', body: { metadata: { ownerReferences: others, uid: obj.metadata?.uid ?? '' } } };
}
