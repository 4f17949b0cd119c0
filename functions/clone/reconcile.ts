/**
 * KubeVirt's VirtualMachineClone controller (reference-replicas-pools-clones §3) as one
 * stateless reconcile of a clone key `namespace/name`:
 *
 * 1. a Succeeded clone whose target VM is gone is deleted (quirk Q-C8);
 * 2. the source (a VM or a VirtualMachineSnapshot) resolved: missing → pending, backend storage → failing;
 * 3. the phase machine, falling through within one pass (`phases.ts`): the `tmp-snapshot-<uid>`
 *    of a VM source, its readiness and content → the `tmp-restore-<uid>` with the patches →
 *    its completion → the target VM → every restored claim Bound, then the temporary objects deleted;
 * 4. the status (`status.ts`), written only when it changed, with the pending or failing event;
 * 5. the pass's error, if any, thrown after the status write (retried with backoff).
 */

import { VM_CLONES, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachineClone } from '../../shared/api/snapshot.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import type { CloneDeps } from './deps.ts';
import { cloneEvent } from './events.ts';
import { PHASE } from './names.ts';
import { resolveSource, runPhases, type PassLearned } from './phases.ts';
import { computeCloneStatus } from './status.ts';
import { absentIsEmpty, writeStatus as writeObjectStatus } from '../../shared/reconcile/write-status.ts';

/** Reconciles the VirtualMachineClone named by `key` (`namespace/name`). */
export async function reconcileClone(key: string, deps: CloneDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = ctx.minResourceVersion;
  const clone = await deps.kube.get(VM_CLONES, namespace, name, { resourceVersion: rv });
  // No finalizers: the temporary snapshot and restore go with the clone through their owner references.
  if (!clone) return done;

  // 1. the target of a finished clone deleted → the clone goes too
  if (clone.status?.phase === PHASE.succeeded) {
    const target = clone.status.targetName ? await deps.kube.get(VMS, namespace, clone.status.targetName, { resourceVersion: rv }) : undefined;
    if (!target) {
      if (!clone.metadata?.deletionTimestamp) await deps.kube.delete(VM_CLONES, namespace, name);
      return done;
    }
  }

  // 2–3. the source, then the phases; what a pass learned survives its error
  const learned: PassLearned = {};
  let error: unknown;
  const source = await resolveSource(clone, deps, rv);
  if ('event' in source) {
    learned[source.kind] = { event: source.event, reason: source.reason };
  } else {
    try {
      const targetKind = clone.spec?.target?.kind ?? 'VirtualMachine';
      if (targetKind !== 'VirtualMachine') throw new InvalidInputError('spec.target.kind', `target type is unknown: ${targetKind}`);
      await runPhases(clone, source, learned, deps, rv);
    } catch (err) {
      error = err;
    }
  }

  // 4. status, with the pending or failing event of this pass
  await writeStatus(clone, learned, deps);
  if (error !== undefined) throw error;
  return done;
}

async function writeStatus(clone: VirtualMachineClone, learned: PassLearned, deps: CloneDeps): Promise<void> {
  const note = learned.pending ?? learned.failing;
  if (note) await cloneEvent(deps, clone, note.event, note.reason);
  await writeObjectStatus(deps.kube, VM_CLONES, clone, computeCloneStatus(clone.status, learned, new Date(deps.now()).toISOString()), { equal: absentIsEmpty });
}
