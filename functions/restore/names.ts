/** The names, annotations, labels and texts KubeVirt's restore controller uses (reference §2, quoted exactly). */
import { getName } from '../../shared/storage/get-name.ts';
export { RESTORE_NAME_ANNOTATION, LAST_RESTORE_UID_ANNOTATION, ALLOW_CLAIM_ADOPTION_ANNOTATION, CONTENT_TYPE_ANNOTATION } from '../../shared/api/well-known.ts';

export const RESTORE_FINALIZER = 'snapshot.kubevirt.io/vmrestore-protection';
export const OWNED_BY_VM_ANNOTATION = 'restore.kubevirt.io/owned-by-vm';
export const SOURCE_VM_NAME_LABEL = 'restore.kubevirt.io/source-vm-name';
export const SOURCE_VM_NAMESPACE_LABEL = 'restore.kubevirt.io/source-vm-namespace';
export const POPULATED_FOR_ANNOTATION = 'cdi.kubevirt.io/storage.populatedFor';
export const PRE_POPULATED_ANNOTATION = 'cdi.kubevirt.io/storage.prePopulated';

/** `DefaultGracePeriod` of the WaitGracePeriod readiness policy. */
export const DEFAULT_GRACE_PERIOD_MS = 5 * 60_000;

export const INITIALIZING = 'Initializing VirtualMachineRestore';
export const OPERATION_COMPLETE = 'Operation complete';

/** `<restore name>-<restore UID>`: the value of lastRestoreUID. */
export const restoreAnnotationValue = (r: { metadata?: { name?: string; uid?: string } }) => `${r.metadata?.name ?? ''}-${r.metadata?.uid ?? ''}`;

export interface NamingInput {
  restoreUid: string;
  targetName: string;
  policy: string | undefined;
  overrides: readonly { volumeName?: string; restoreName?: string }[] | undefined;
}

/** `restoreVolumeName(volumeName, originalClaim)` (§2.2): the restored PVC's and DataVolume's name. */
export function restoreVolumeName(n: NamingInput, volumeName: string, originalClaim: string): string {
  const override = n.overrides?.find((o) => o.volumeName === volumeName && o.restoreName);
  if (override?.restoreName) return override.restoreName;
  if (n.policy === 'InPlace') return originalClaim;
  if (n.policy === 'PrefixTargetName') return getName(n.targetName, volumeName, 63);
  return `restore-${n.restoreUid}-${volumeName}`;
}
