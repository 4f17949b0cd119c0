/**
 * What the snapshot controller knows about its source (reference §1.3), read from the VM and its
 * VMI: online (a VMI exists), paused (`Paused`=True), a guest agent (an `AgentConnected`
 * condition of any status), frozen, and locked (`status.snapshotInProgress` names this snapshot
 * AND the VM carries the source-protection finalizer).
 */
import { SOURCE_FINALIZER } from './names.ts';
import type { VirtualMachine, Vmi } from '../../shared/api/snapshot.ts';

export interface SourceState {
  online: boolean;
  paused: boolean;
  guestAgent: boolean;
  frozen: boolean;
  locked: boolean;
}

export function sourceState(vm: VirtualMachine, vmi: Vmi | undefined, snapshotName: string): SourceState {
  const conds = vmi?.status?.conditions ?? [];
  return {
    online: vmi !== undefined,
    paused: conds.some((c) => c.type === 'Paused' && c.status === 'True'),
    guestAgent: conds.some((c) => c.type === 'AgentConnected'),
    frozen: vmi?.status?.fsFreezeStatus === 'frozen',
    locked: vm.status?.snapshotInProgress === snapshotName && (vm.metadata?.finalizers ?? []).includes(SOURCE_FINALIZER),
  };
}

/** The lock message the Progressing condition's reason carries (before any failure text). */
export const lockMessage = (locked: boolean) => (locked ? 'Source locked and operation in progress' : 'Source not locked');
