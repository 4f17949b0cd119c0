/**
 * The backup's conditions, written as `meta.SetStatusCondition` writes them (reference §0): a
 * condition's `lastTransitionTime` moves only when its status changes, its reason and message are
 * overwritten in place, a new type is appended. And the helpers of §4.2 on top: initializing,
 * failed, terminal, and the quiesce result.
 */
import type { MetaCondition, VirtualMachineBackupStatus } from '../../shared/api/backup.ts';
import { COND, REASON } from './names.ts';

export function setStatusCondition(list: readonly MetaCondition[] | undefined, c: Omit<MetaCondition, 'lastTransitionTime'>, nowIso: string): MetaCondition[] {
  const out = [...(list ?? [])];
  const i = out.findIndex((x) => x.type === c.type);
  if (i < 0) return [...out, { ...c, lastTransitionTime: nowIso }];
  const old = out[i]!;
  out[i] = { ...old, ...c, lastTransitionTime: old.status === c.status ? old.lastTransitionTime : nowIso };
  return out;
}

const get = (s: VirtualMachineBackupStatus, type: string) => s.conditions?.find((c) => c.type === type);

/** `Complete=True` or `Failed=True`: the backup is over. */
export const isTerminal = (s: VirtualMachineBackupStatus | undefined) => s !== undefined && (get(s, COND.complete)?.status === 'True' || get(s, COND.failed)?.status === 'True');

/** `Progressing=True Initializing <msg>`. */
export function setInitializing(s: VirtualMachineBackupStatus, message: string, nowIso: string): void {
  s.conditions = setStatusCondition(s.conditions, { type: COND.progressing, status: 'True', reason: REASON.initializing, message }, nowIso);
}

/** `Progressing=True <reason> <msg>`. */
export function setProgressing(s: VirtualMachineBackupStatus, reason: string, message: string, nowIso: string): void {
  s.conditions = setStatusCondition(s.conditions, { type: COND.progressing, status: 'True', reason, message }, nowIso);
}

/** `Failed=True` and `Progressing=False`, both `<reason>` "Backup has failed: <msg>". */
export function setFailed(s: VirtualMachineBackupStatus, reason: string, message: string, nowIso: string): void {
  const text = `Backup has failed: ${message}`;
  s.conditions = setStatusCondition(s.conditions, { type: COND.failed, status: 'True', reason, message: text }, nowIso);
  s.conditions = setStatusCondition(s.conditions, { type: COND.progressing, status: 'False', reason, message: text }, nowIso);
}

/** `Complete=True` and `Progressing=False` with the same reason and message. */
export function setComplete(s: VirtualMachineBackupStatus, reason: string, message: string, nowIso: string): void {
  s.conditions = setStatusCondition(s.conditions, { type: COND.complete, status: 'True', reason, message }, nowIso);
  s.conditions = setStatusCondition(s.conditions, { type: COND.progressing, status: 'False', reason, message }, nowIso);
}

const QUIESCE: Record<string, { status: 'True' | 'False'; reason: string; message: string }> = {
  Succeeded: { status: 'True', reason: REASON.quiesceSucceeded, message: 'Guest filesystem was successfully quiesced' },
  Failed: { status: 'False', reason: REASON.quiesceFailed, message: 'Guest filesystem quiesce failed' },
  Skipped: { status: 'False', reason: REASON.quiesceSkipped, message: 'Guest filesystem quiesce was skipped' },
};

/** The `Quiesced` condition from virt-handler's `quiesceStatus`, when it reported one. */
export function setQuiesced(s: VirtualMachineBackupStatus, quiesceStatus: string | undefined, nowIso: string): void {
  const q = quiesceStatus !== undefined ? QUIESCE[quiesceStatus] : undefined;
  if (q) s.conditions = setStatusCondition(s.conditions, { type: COND.quiesced, ...q }, nowIso);
}
