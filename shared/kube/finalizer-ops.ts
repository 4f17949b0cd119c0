/**
 * Finalizer edits as JSON patches guarded by what they replace (reference-snapshot-export-backup.md
 * §0: a `test` of the old list, then the new one), so a concurrent edit fails with a Conflict
 * instead of being overwritten. Other controllers' finalizers are kept. Pure.
 */
import type { JsonPatchOperation } from './client.ts';

interface WithFinalizers {
  readonly metadata?: { readonly finalizers?: readonly string[] | undefined; readonly resourceVersion?: string | undefined } | undefined;
}

/** Adds `finalizer`, keeping the others; [] when present. */
export function addFinalizerOps(obj: WithFinalizers, finalizer: string): JsonPatchOperation[] {
  const old = obj.metadata?.finalizers;
  if (old?.includes(finalizer)) return [];
  // A `test` of an absent list cannot guard an `add`: the resourceVersion does.
  if (old === undefined) return [{ op: 'test', path: '/metadata/resourceVersion', value: obj.metadata?.resourceVersion }, { op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
  return [{ op: 'test', path: '/metadata/finalizers', value: old }, { op: 'add', path: '/metadata/finalizers/-', value: finalizer }];
}

/** Removes `finalizer`; [] when absent. */
export function removeFinalizerOps(obj: WithFinalizers, finalizer: string): JsonPatchOperation[] {
  const old = obj.metadata?.finalizers ?? [];
  if (!old.includes(finalizer)) return [];
  const next = old.filter((f) => f !== finalizer);
  return [{ op: 'test', path: '/metadata/finalizers', value: old }, next.length > 0 ? { op: 'replace', path: '/metadata/finalizers', value: next } : { op: 'remove', path: '/metadata/finalizers' }];
}
