/**
 * Snapshot indications (reference §1.6): online adds `Online` and then `Paused`, or `GuestAgent`
 * (+ `QuiesceTimeout` when the error says "fsfreeze is limited"), or `NoGuestAgent`, to those
 * already recorded, sorted; offline clears them. `PartialSnapshot` is appended, unsorted, when
 * the snapshot completed without some snapshotable volume.
 */
import type { SourceIndication } from '../../shared/api/snapshot.ts';

export const INDICATION_MESSAGES: Readonly<Record<string, string>> = {
  Online: 'Snapshot taken while the VM was running. Consistency depends on guest-agent quiescing.',
  GuestAgent: 'Guest agent was active and attempted to quiesce the filesystem for application consistency.',
  NoGuestAgent: 'Guest agent was not available. Snapshot is crash-consistent and may not be application-consistent.',
  QuiesceTimeout: 'Guest agent quiesced the filesystem, but the freeze window timed out before completion. Snapshot is crash-consistent and may not be application-consistent.',
  Paused: 'Snapshot taken while the VM was paused. Snapshot is crash-consistent and may not be application-consistent.',
  PartialSnapshot: 'Not all snapshotable volumes were included in the snapshot. Check status.snapshotVolumes for excluded volumes and VM VolumeSnapshotStatus for details.',
};

export const withMessages = (list: readonly string[]): SourceIndication[] => list.map((indication) => ({ indication, message: INDICATION_MESSAGES[indication] ?? 'Unknown indication' }));

export function onlineIndications(existing: readonly string[] | null | undefined, s: { paused: boolean; guestAgent: boolean }, errorMessage: string | undefined): string[] {
  const set = new Set(existing ?? []);
  set.add('Online');
  if (s.paused) set.add('Paused');
  else if (s.guestAgent) {
    set.add('GuestAgent');
    if (errorMessage?.includes('fsfreeze is limited')) set.add('QuiesceTimeout');
  } else set.add('NoGuestAgent');
  return [...set].sort();
}
