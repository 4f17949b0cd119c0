/**
 * The clone controller's names and constants (reference-replicas-pools-clones §3): the
 * temporary objects `tmp-snapshot-<clone UID>` and `tmp-restore-<clone UID>`, the owner
 * reference they carry, the phases, and the generated target name.
 */
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';
export { SNAPSHOT_API_VERSION, RESTORE_NAME_ANNOTATION, LAST_RESTORE_UID_ANNOTATION } from '../../shared/api/well-known.ts';
import { randomSuffix } from '../../shared/api/random-name.ts';

export { randomSuffix };

export const CLONE_API_VERSION = 'clone.kubevirt.io/v1beta1';
export const KIND_CLONE = 'VirtualMachineClone';

/** `status.phase` values (`Unknown` exists in the API but is never set). */
export const PHASE = {
  unset: '',
  snapshotInProgress: 'SnapshotInProgress',
  restoreInProgress: 'RestoreInProgress',
  creatingTargetVm: 'CreatingTargetVM',
  succeeded: 'Succeeded',
  failed: 'Failed',
} as const;

export const snapshotNameFor = (cloneUid: string) => `tmp-snapshot-${cloneUid}`;
export const restoreNameFor = (cloneUid: string) => `tmp-restore-${cloneUid}`;

/** The controller reference both temporary objects carry (garbage-collected with the clone). */
export function cloneOwnerRef(clone: VirtualMachineClone) {
  return { apiVersion: CLONE_API_VERSION, kind: KIND_CLONE, name: clone.metadata?.name ?? '', uid: clone.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** apimachinery's `rand.String` alphabet (no vowels, no confusable digits). */

/** The target name when the clone names none: `<source>-clone-<5>`, or `clone-object-<5>` when `<source>-clone` is over 252 characters. */
export function generatedTargetName(sourceVmName: string, random: () => number = Math.random): string {
  const base = `${sourceVmName}-clone`;
  return base.length > 252 ? `clone-object-${randomSuffix(5, random)}` : `${base}-${randomSuffix(5, random)}`;
}
