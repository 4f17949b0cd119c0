/**
 * The status refs a VM's matchers lead to (KubeVirt's `revision/store.go`,
 * reference-vm-vmi-depth.md §1.3 step 2), pure: what `status.instancetypeRef` /
 * `status.preferenceRef` become before any revision is created, and whether one must be.
 */
import type { InstancetypeMatcher, InstancetypeStatusRef } from '../../../shared/api/index.ts';

export interface NextRef {
  readonly ref: InstancetypeStatusRef;
  /** No revision pinned yet: one is created from the live object. */
  readonly needsRevision: boolean;
}

/**
 * From the matcher (its `kind` already defaulted) and the current ref: a name, kind or
 * inferFromVolume that differs is copied and unpins the revision; a failure policy is copied; a
 * `revisionName` pins that revision without creating one.
 */
export function nextStatusRef(matcher: InstancetypeMatcher, current: InstancetypeStatusRef | undefined): NextRef {
  const ref: InstancetypeStatusRef = structuredClone(current ?? {});
  let moved = false;
  for (const key of ['name', 'kind', 'inferFromVolume'] as const) {
    const value = matcher[key];
    if (value && value !== ref[key]) {
      ref[key] = value;
      moved = true;
    }
  }
  if (moved) delete ref.controllerRevisionRef;
  if (matcher.inferFromVolumeFailurePolicy !== undefined) ref.inferFromVolumeFailurePolicy = matcher.inferFromVolumeFailurePolicy;
  if (matcher.revisionName) ref.controllerRevisionRef = { name: matcher.revisionName };
  return { ref, needsRevision: !ref.controllerRevisionRef?.name };
}
