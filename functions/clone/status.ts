/**
 * The clone's status after a pass (reference §3.4), pure: conditions from whether the pass is
 * pending, failing or still processing, then the phase walk — each phase records the name it
 * learned and moves on when its object is ready, so one pass may advance several phases; a
 * Succeeded clone is Ready; once the claims are bound the temporary objects' names go.
 * Conditions keep KubeVirt's rule (replaced only when status or reason changes, never a message).
 */
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';
import { updateCondition } from '../../shared/storage/conditions.ts';
import { PHASE } from './names.ts';

export type CloneStatus = NonNullable<VirtualMachineClone['status']>;

/** What one pass learned (KubeVirt's `syncInfoType`). */
export interface PassResult {
  /** Waiting on something outside the clone: the phase stays; `reason` is the Ready reason and the event's message. */
  readonly pending?: { readonly event: string; readonly reason: string } | undefined;
  /** The clone cannot go on: phase Failed. */
  readonly failing?: { readonly event: string; readonly reason: string } | undefined;
  readonly snapshotName?: string | undefined;
  readonly snapshotReady?: boolean | undefined;
  readonly restoreName?: string | undefined;
  readonly restoreReady?: boolean | undefined;
  readonly targetVmName?: string | undefined;
  readonly targetVmCreated?: boolean | undefined;
  /** Every restored claim Bound and the temporary objects deleted. */
  readonly pvcBound?: boolean | undefined;
}

/** The status to write after a pass that learned `r`. Never mutates its input. */
export function computeCloneStatus(current: VirtualMachineClone['status'], r: PassResult, nowIso: string): CloneStatus {
  const st: CloneStatus = { ...(current ?? {}) };
  // A Failed clone reconciled again gets "Still processing", and stays Failed (quirk Q-C1).
  let progressing: ['True' | 'False', string] = ['True', 'Still processing'];
  let ready: ['True' | 'False', string] = ['False', 'Still processing'];
  if (r.pending) [progressing, ready] = [['False', 'Pending'], ['False', r.pending.reason]];
  else if (r.failing) {
    st.phase = PHASE.failed;
    [progressing, ready] = [['False', 'Failed'], ['False', r.failing.reason]];
  }

  const phase = () => st.phase ?? PHASE.unset;
  if (phase() === PHASE.unset && !r.pending) st.phase = PHASE.snapshotInProgress;
  if (phase() === PHASE.snapshotInProgress) {
    if (r.snapshotName) st.snapshotName = r.snapshotName;
    if (r.snapshotReady) st.phase = PHASE.restoreInProgress;
  }
  if (phase() === PHASE.restoreInProgress) {
    if (r.restoreName) st.restoreName = r.restoreName;
    if (r.restoreReady) st.phase = PHASE.creatingTargetVm;
  }
  if (phase() === PHASE.creatingTargetVm) {
    if (r.targetVmName) st.targetName = r.targetVmName;
    if (r.targetVmCreated) st.phase = PHASE.succeeded;
  }
  if (phase() === PHASE.succeeded) [progressing, ready] = [['False', 'Ready'], ['True', 'Ready']];
  // The pair is applied once, to the stored conditions: applying "Still processing" first and
  // then "Ready" would move a Succeeded clone's times on every pass, and its own status event
  // would reconcile it again without end (docs/clone-controller.md).
  st.conditions = updateCondition(updateCondition(st.conditions, 'Progressing', progressing[0], progressing[1], nowIso), 'Ready', ready[0], ready[1], nowIso);
  if (r.pvcBound) {
    // KubeVirt sets the pointers to nil, which its omitempty fields drop.
    delete st.snapshotName;
    delete st.restoreName;
  }
  return st;
}
