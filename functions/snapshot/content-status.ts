/**
 * The content's status from its VolumeSnapshots (reference §1.5 steps 4–8), as a pure function:
 * one entry per VolumeSnapshot found (or just created); created when every entry has a
 * creationTime, ready when every one is readyToUse (both true with none); a missing snapshot of a
 * created content is an error, one skipped because the VM snapshot is going away another; the
 * error's time changes only when its message does.
 */
import type { SnapshotError, VirtualMachineSnapshotContent, VolumeSnapshot, VolumeSnapshotStatusEntry } from '../../shared/api/snapshot.ts';

export interface ContentAggregate {
  entries: VolumeSnapshotStatusEntry[];
  created: boolean;
  ready: boolean;
  errorMessage: string;
}

export function entryOf(vs: VolumeSnapshot): VolumeSnapshotStatusEntry {
  const s = vs.status;
  return {
    volumeSnapshotName: vs.metadata?.name ?? '',
    ...(s?.readyToUse !== undefined ? { readyToUse: s.readyToUse } : {}),
    ...(s?.creationTime ? { creationTime: s.creationTime } : {}),
    ...(s?.error ? { error: { ...(s.error.message ? { message: s.error.message } : {}), ...(s.error.time ? { time: s.error.time } : {}) } } : {}),
  };
}

export function aggregate(found: VolumeSnapshot[], deleted: string[], skipped: string[]): ContentAggregate {
  const entries = found.map(entryOf);
  if (deleted.length > 0) return { entries, created: false, ready: false, errorMessage: `VolumeSnapshots (${deleted.join(',')}) missing` };
  if (skipped.length > 0) return { entries, created: false, ready: false, errorMessage: `VolumeSnapshots (${skipped.join(',')}) skipped because vm snapshot is deleted` };
  const firstError = entries.find((e) => e.error?.message);
  return {
    entries,
    created: entries.every((e) => e.creationTime !== undefined),
    ready: entries.every((e) => e.readyToUse === true),
    errorMessage: firstError ? `VolumeSnapshot ${firstError.volumeSnapshotName} error: ${firstError.error?.message ?? ''}` : '',
  };
}

/** Step 7: the error field — set while not ready (time moves with the message), cleared when empty. */
export function nextError(current: SnapshotError | null | undefined, message: string, ready: boolean, nowIso: string): SnapshotError | undefined {
  if (message === '') return undefined;
  if (!ready) return current?.message === message ? { ...current } : { time: nowIso, message };
  return current ?? undefined;
}

/** Step 8: the content's next status (creationTime is set by the caller once created, with the thaw). */
export function nextContentStatus(content: VirtualMachineSnapshotContent, agg: ContentAggregate, nowIso: string): NonNullable<VirtualMachineSnapshotContent['status']> {
  const st = structuredClone(content.status ?? {});
  const error = nextError(st.error, agg.errorMessage, agg.ready, nowIso);
  if (error) st.error = error;
  else delete st.error;
  st.readyToUse = agg.ready;
  st.volumeSnapshotStatus = agg.entries;
  return st;
}
