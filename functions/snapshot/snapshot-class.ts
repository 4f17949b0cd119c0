/**
 * `getVolumeSnapshotClassName` (reference §1.7): the StorageProfile's `status.snapshotClass`
 * when set (and that class exists), else the one VolumeSnapshotClass whose driver is the
 * StorageClass's provisioner, else among several the first carrying the default-class
 * annotation key (its value is not read). "" = no class; several without a default is an error.
 */
import { DEFAULT_VSC_ANNOTATION } from './names.ts';
import type { StorageClass, VolumeSnapshotClass } from '../../shared/api/snapshot.ts';

export type ClassChoice = { name: string } | { error: string };

export function volumeSnapshotClassFor(
  storageClassName: string,
  storageClass: StorageClass | undefined,
  profileSnapshotClass: string | undefined,
  classes: readonly VolumeSnapshotClass[],
): ClassChoice {
  if (!storageClass) return { name: '' };
  if (profileSnapshotClass) return { name: classes.some((c) => c.metadata?.name === profileSnapshotClass) ? profileSnapshotClass : '' };
  const matching = classes.filter((c) => c.driver === storageClass.provisioner);
  if (matching.length === 0) return { name: '' };
  if (matching.length === 1) return { name: matching[0]!.metadata?.name ?? '' };
  const def = matching.find((c) => c.metadata?.annotations?.[DEFAULT_VSC_ANNOTATION] !== undefined);
  if (def) return { name: def.metadata?.name ?? '' };
  return { error: `${matching.length} matching VolumeSnapshotClasses for ${storageClassName}` };
}
