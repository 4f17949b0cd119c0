/**
 * `updateSnapshotStatus` (reference §1.6) as a pure function: the snapshot's new status from the
 * source, the content and the lock, with phases Failed (deadline), Succeeded (content has a
 * creationTime — possibly before readyToUse, quirk 1), InProgress or Deleting; conditions in
 * first-insertion order whose timestamps move only when status or reason changes.
 */
import { updateCondition } from '../../shared/storage/conditions.ts';
import { isSnapshotable } from '../../shared/storage/vm-volumes.ts';
import { deadlineExceeded } from './deadline.ts';
import { onlineIndications, withMessages } from './indications.ts';
import type { SourceState } from './source-state.ts';
import type { SnapshotStatus, VirtualMachine, VirtualMachineSnapshot, VirtualMachineSnapshotContent } from '../../shared/api/snapshot.ts';

export interface StatusFacts {
  source: VirtualMachine | undefined;
  state: SourceState | undefined;
  /** The lock message, failure text appended (Progressing's reason while in progress). */
  lockMessage: string;
  content: VirtualMachineSnapshotContent | undefined;
  nowMs: number;
  nowIso: string;
}

export function computeSnapshotStatus(snapshot: VirtualMachineSnapshot, f: StatusFacts): SnapshotStatus {
  const st: SnapshotStatus = structuredClone(snapshot.status ?? { readyToUse: false });
  if (f.source) st.sourceUID = f.source.metadata?.uid ?? '';
  if (f.content?.status) {
    st.virtualMachineSnapshotContentName = f.content.metadata?.name ?? '';
    // Copied as they are: a content whose error (or creationTime) went clears the snapshot's too.
    const cs = f.content.status;
    if (cs.creationTime) st.creationTime = cs.creationTime;
    else delete st.creationTime;
    st.readyToUse = cs.readyToUse ?? false;
    if (cs.error) st.error = cs.error;
    else delete st.error;
  }
  let conds = st.conditions;
  const set = (type: string, status: 'True' | 'False', reason: string) => (conds = updateCondition(conds, type, status, reason, f.nowIso));
  if (deadlineExceeded({ ...snapshot, status: st }, f.nowMs)) {
    st.phase = 'Failed';
    set('Failure', 'True', 'snapshot deadline exceeded');
    set('Progressing', 'False', 'Operation failed');
  } else if (st.phase === 'Succeeded' || (st.creationTime !== undefined && st.creationTime !== null)) {
    st.phase = 'Succeeded';
    set('Progressing', 'False', 'Operation complete');
    if (f.content) {
      const vmVolumes = f.content.spec?.source?.virtualMachine?.spec?.template?.spec?.volumes ?? [];
      const included = new Set((f.content.spec?.volumeBackups ?? []).map((b) => b.volumeName));
      const inc = vmVolumes.filter((v) => included.has(v.name)).map((v) => v.name);
      const exc = vmVolumes.filter((v) => !included.has(v.name));
      st.snapshotVolumes = { includedVolumes: inc, excludedVolumes: exc.map((v) => v.name) };
      if (exc.some(isSnapshotable) && !(st.indications ?? []).includes('PartialSnapshot')) {
        st.indications = [...(st.indications ?? []), 'PartialSnapshot'];
        st.sourceIndications = withMessages(st.indications);
      }
    }
  } else {
    st.phase = 'InProgress';
    if (f.source && f.state) {
      set('Progressing', f.state.locked ? 'True' : 'False', f.lockMessage);
      if (f.state.online) {
        st.indications = onlineIndications(st.indications, f.state, st.error?.message);
        st.sourceIndications = withMessages(st.indications);
      } else {
        // Going offline clears the indications (quirk 2): nil fields, omitted on the wire.
        delete st.indications;
        delete st.sourceIndications;
      }
    } else {
      set('Progressing', 'False', 'Source does not exist');
    }
    if (snapshot.metadata?.deletionTimestamp) {
      st.phase = 'Deleting';
      set('Progressing', 'False', 'VM snapshot is deleting');
    }
  }
  if (st.readyToUse) set('Ready', 'True', 'Ready');
  else set('Ready', 'False', 'Not ready');
  if (st.error) set('Progressing', 'False', 'In error state');
  st.conditions = conds ?? [];
  return st;
}
