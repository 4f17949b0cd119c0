/**
 * The JSON patches the pool writes on metadata, each guarded by a `test` of what it replaces (a
 * concurrent change makes it fail with a Conflict rather than be overwritten). Pure.
 *
 * Two upstream shapes are broken and are not copied (docs/pool-controller.md): the pool
 * finalizer is *appended* (upstream replaces the whole list, dropping other controllers'
 * finalizers, Q-P5), and releasing a VM removes only this pool's reference and finalizer as a
 * well-formed patch (upstream prints the kept finalizers Go-style, which is invalid JSON whenever
 * another finalizer remains, so the release fails forever, Q-P4).
 */
import type { JsonPatchOperation } from '../../shared/kube/client.ts';
import { addFinalizerOps as addFinalizer, removeFinalizerOps as removeFinalizer } from '../../shared/kube/finalizer-ops.ts';
import { POOL_FINALIZER } from './well-known.ts';

interface Meta {
  readonly metadata?: { readonly finalizers?: readonly string[] | undefined; readonly ownerReferences?: readonly { readonly uid?: string | undefined }[] | undefined; readonly resourceVersion?: string | undefined } | undefined;
}

/** Ops replacing the list at `path` (`old` → `next`); `remove` when nothing remains. */
function replaceList(path: string, old: readonly unknown[], next: readonly unknown[]): JsonPatchOperation[] {
  return [{ op: 'test', path, value: old }, next.length > 0 ? { op: 'replace', path, value: next } : { op: 'remove', path }];
}

/** Adds the pool finalizer, keeping the others; [] when present. */
export const addFinalizerOps = (obj: Meta): JsonPatchOperation[] => addFinalizer(obj, POOL_FINALIZER);

/** Removes the pool finalizer; [] when absent. */
export const removeFinalizerOps = (obj: Meta): JsonPatchOperation[] => removeFinalizer(obj, POOL_FINALIZER);

/** Removes every owner reference with `uid` (state preservation: the PVC or DataVolume outlives its VM); [] when none. */
export function removeOwnerOps(obj: Meta, uid: string): JsonPatchOperation[] {
  const old = obj.metadata?.ownerReferences ?? [];
  if (!old.some((r) => r.uid === uid)) return [];
  return replaceList('/metadata/ownerReferences', old, old.filter((r) => r.uid !== uid));
}

/** Releases a VM that no longer matches the selector: drops the pool's references and finalizer, nothing else. */
export function releaseOps(vm: Meta, poolUid: string): JsonPatchOperation[] {
  return [...removeOwnerOps(vm, poolUid), ...removeFinalizerOps(vm)];
}
