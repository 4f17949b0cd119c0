/**
 * The JSON patches the backup controller sends (reference §0, §4.2), each guarded by a `test` of
 * the value it replaces so a concurrent writer makes it fail (409) rather than be overwritten:
 * the finalizer, the VMI's utility volume, the VMI's `backupStatus`, the tracker's checkpoint.
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import type { BackupCheckpoint } from '../../shared/api/backup.ts';
import type { JsonPatchOperation, Patch } from '../../shared/kube/client.ts';

/** `finalizers` with `finalizer` added or removed; undefined when nothing changes. */
export function finalizerPatch(finalizers: readonly string[] | undefined, finalizer: string, want: boolean): Patch | undefined {
  const has = (finalizers ?? []).includes(finalizer);
  if (has === want) return undefined;
  const next = want ? [...(finalizers ?? []), finalizer] : (finalizers ?? []).filter((f) => f !== finalizer);
  // An absent list tests as null (evanphx/json-patch and the sandbox alike); `add` creates it.
  const ops: JsonPatchOperation[] = [
    { op: 'test', path: '/metadata/finalizers', value: finalizers ?? null },
    { op: finalizers ? 'replace' : 'add', path: '/metadata/finalizers', value: next },
  ];
  return { type: 'json', ops };
}

interface UtilityVolume {
  name: string;
  claimName: string;
  type: string;
}
const utilityVolumesOf = (vmi: VirtualMachineInstance) => (vmi.spec as { utilityVolumes?: UtilityVolume[] }).utilityVolumes;

/** Adds the backup target as a utility volume `{name, claimName, type: Backup}`; undefined when it is there. */
export function addUtilityVolumePatch(vmi: VirtualMachineInstance, name: string, claimName: string): Patch | undefined {
  const current = utilityVolumesOf(vmi);
  if (current?.some((u) => u.name === name)) return undefined;
  const next = [...(current ?? []), { name, claimName, type: 'Backup' }];
  return { type: 'json', ops: [{ op: 'test', path: '/spec/utilityVolumes', value: current ?? null }, { op: current ? 'replace' : 'add', path: '/spec/utilityVolumes', value: next }] };
}

/** Removes the utility volume from the spec (the list goes when it would be empty); undefined when it is not there. */
export function removeUtilityVolumePatch(vmi: VirtualMachineInstance, name: string): Patch | undefined {
  const current = utilityVolumesOf(vmi);
  if (!current?.some((u) => u.name === name)) return undefined;
  const next = current.filter((u) => u.name !== name);
  return { type: 'json', ops: [{ op: 'test', path: '/spec/utilityVolumes', value: current }, next.length ? { op: 'replace', path: '/spec/utilityVolumes', value: next } : { op: 'remove', path: '/spec/utilityVolumes' }] };
}

const BACKUP_STATUS = '/status/changedBlockTracking/backupStatus';

/** Records the started backup on the VMI, provided its `backupStatus` is still what we read. */
export function startBackupStatusPatch(vmi: VirtualMachineInstance, backupName: string, startTimestamp: string | undefined): Patch {
  const current = vmi.status?.changedBlockTracking?.backupStatus;
  return {
    type: 'json',
    ops: [
      { op: 'test', path: BACKUP_STATUS, value: current ?? null },
      { op: current ? 'replace' : 'add', path: BACKUP_STATUS, value: { backupName, ...(startTimestamp ? { startTimestamp } : {}) } },
    ],
  };
}

/** Clears `backupStatus` once the backup is over and its target detached. */
export const removeBackupStatusPatch = (): Patch => ({ type: 'json', ops: [{ op: 'remove', path: BACKUP_STATUS }] });

/** The tracker's latest checkpoint (`/status` subresource): `add /status` without one yet, else replace it. */
export function trackerCheckpointPatch(hasCheckpoint: boolean, checkpoint: BackupCheckpoint): Patch {
  return hasCheckpoint ? { type: 'json', ops: [{ op: 'replace', path: '/status/latestCheckpoint', value: checkpoint }] } : { type: 'json', ops: [{ op: 'add', path: '/status', value: { latestCheckpoint: checkpoint } }] };
}

/** After a redefinition: the flag goes (and, when the checkpoint was refused, the checkpoint too). */
export function redefinitionDonePatch(clearCheckpoint: boolean): Patch {
  return { type: 'json', ops: [{ op: 'remove', path: '/status/checkpointRedefinitionRequired' }, ...(clearCheckpoint ? [{ op: 'remove' as const, path: '/status/latestCheckpoint' }] : [])] };
}
