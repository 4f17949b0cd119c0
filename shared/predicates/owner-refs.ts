/**
 * Owner references as KubeVirt's controller-ref manager reads and writes them
 * (reference-replicas-pools-clones.md §0): who controls an object, the reference a controller
 * puts on what it creates, and the adopt / release patches.
 */
import type { Patch } from '../kube/client.ts';

/** The part of an object's metadata owner references live in. */
export interface Owned {
  metadata?: {
    uid?: string | undefined;
    ownerReferences?: readonly { apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean; blockOwnerDeletion?: boolean }[] | undefined;
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
export function controllerOf(obj: Owned): { kind?: string; name?: string; uid?: string } | undefined {
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
 * Adoption: a merge patch that sets the owner references to just this controller, guarded by the
 * object's `uid` (a recreated object of the same name does not match and the patch fails).
 */
export function adoptPatch(ref: ControllerRef, objectUid: string): Patch {
  return { type: 'merge', body: { metadata: { ownerReferences: [ref], uid: objectUid } } };
}

/** Release: a merge patch that removes every owner reference, guarded by the object's `uid`. */
export function releasePatch(objectUid: string): Patch {
  return { type: 'merge', body: { metadata: { ownerReferences: [], uid: objectUid } } };
}
