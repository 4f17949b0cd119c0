/**
 * The clone controller's names and constants (reference-replicas-pools-clones §3): the
 * temporary objects `tmp-snapshot-<clone UID>` and `tmp-restore-<clone UID>`, the owner
 * reference they carry, the phases, and the generated target name.
 */
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';

export const CLONE_API_VERSION = 'clone.kubevirt.io/v1beta1';
export const KIND_CLONE = 'VirtualMachineClone';
export const SNAPSHOT_API_VERSION = 'snapshot.kubevirt.io/v1beta1';
/** The annotation the restore controller puts on the claims it creates: the restore's name. */
export const RESTORE_NAME_ANNOTATION = 'restore.kubevirt.io/name';
/** Never removed from the VM's annotations by an annotation filter. */
export const LAST_RESTORE_UID_ANNOTATION = 'restore.kubevirt.io/lastRestoreUID';

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
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `rand.String(n)`: `n` characters of {@link ALPHABET}; `random` is `Math.random`'s contract. */
export function randomSuffix(n: number, random: () => number = Math.random): string {
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[Math.floor(random() * ALPHABET.length) % ALPHABET.length];
  return out;
}

/** The target name when the clone names none: `<source>-clone-<5>`, or `clone-object-<5>` when `<source>-clone` is over 252 characters. */
export function generatedTargetName(sourceVmName: string, random: () => number = Math.random): string {
  const base = `${sourceVmName}-clone`;
  return base.length > 252 ? `clone-object-${randomSuffix(5, random)}` : `${base}-${randomSuffix(5, random)}`;
}
