/**
 * KubeVirt's disruption-budget controller as one stateless reconcile, keyed by VMI `ns/name`
 * (reference node-drain-updates §4). At this KubeVirt version it only cleans up: every
 * PodDisruptionBudget in the VMI's namespace whose controller owner is a VirtualMachineInstance
 * of that name (the UID is not compared) is deleted, whatever the VMI's phase, strategy or
 * existence. The eviction webhook protects VMIs instead of PDBs now.
 *
 * observe (LIST the namespace's PDBs) → decide (the leftovers) → expectations gate, only when
 * there is something to delete (a deletion is observed once the PDB is gone or terminating) →
 * delete each leftover, one after another → events.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { PDBS, VMIS } from '../../shared/api/index.ts';
import { TransientError, errorText } from '../../shared/errors.ts';
import { kubevirtRef, recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { done, type Outcome, type ReconcileContext, waitAfter } from '../../shared/reconcile/outcome.ts';
import { expectationsGate, type Gate } from '../../shared/reconcile/expectations-gate.ts';
import { PDB_EXPECTATIONS, type DisruptionBudgetDeps } from './deps.ts';
import { legacyPdbsToDelete } from './legacy-pdbs.ts';

export async function reconcileDisruptionBudget(key: string, deps: DisruptionBudgetDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const [namespace = '', name = ''] = key.split('/');
  // observe
  const pdbs = (await deps.kube.list(PDBS, namespace, { resourceVersion: ctx.minResourceVersion })).items;
  // decide, then the expectations gate: it holds back deletes only, so a pass with nothing to
  // delete (nearly every pass: one per VMI event) reads no record
  const doomed = legacyPdbsToDelete(pdbs, namespace, name);
  if (doomed.length === 0) return done;
  const gate = await expectationsGate(pdbGate(key, namespace, deps), pdbs, deps);
  if (gate.kind === 'wait') return waitAfter(gate.seconds, 'PDB deletion not yet observed');
  // The VMI is only the events' subject; a stub (no UID) when it is gone.
  const vmi = (await deps.kube.get(VMIS, namespace, name)) ?? { metadata: { namespace, name } };
  // act
  let lastError: string | undefined;
  for (const pdb of doomed) {
    const pdbName = pdb.metadata?.name ?? '';
    // Overwrites, as KubeVirt's ExpectDeletions does: with several PDBs only the last is tracked.
    await deps.expectations.expectDeletions(PDB_EXPECTATIONS, key, [`${namespace}/${pdbName}`], deps.now());
    try {
      await deps.kube.delete(PDBS, namespace, pdbName);
      await recordEvent(deps, kubevirtRef(vmi), 'Normal', 'SuccessfulDelete', `Deleted PodDisruptionBudget ${pdbName}`, EVENT_COMPONENT.disruptionBudget);
    } catch (err) {
      await deps.expectations.deletionObserved(PDB_EXPECTATIONS, key, `${namespace}/${pdbName}`);
      await recordEvent(deps, kubevirtRef(vmi), 'Warning', 'FailedDelete', `Error deleting the PodDisruptionBudget ${pdbName}: ${errorText(err)}`, EVENT_COMPONENT.disruptionBudget);
      lastError = `Error deleting the PodDisruptionBudget ${pdbName}: ${errorText(err)}`;
    }
  }
  if (lastError) throw new TransientError('FailedDelete', lastError);
  return done;
}

/**
 * KubeVirt lowers the record from the PDB informer's delete event. The list this pass made is the
 * observation here (shared/reconcile/expectations-gate.ts): a tracked PDB that is gone, or
 * terminating, is observed deleted.
 */
function pdbGate(key: string, namespace: string, deps: DisruptionBudgetDeps): Gate<readonly V1PodDisruptionBudget[]> {
  return {
    key,
    scopes: [PDB_EXPECTATIONS],
    what: 'PDB deletion',
    lower: async (pdbs, [record]) => {
      const present = new Map(pdbs.map((p) => [`${namespace}/${p.metadata?.name ?? ''}`, p]));
      for (const k of record?.deleteKeys ?? []) {
        const p = present.get(k);
        if (!p || p.metadata?.deletionTimestamp) await deps.expectations.deletionObserved(PDB_EXPECTATIONS, key, k);
      }
      return deps.expectations.satisfied(PDB_EXPECTATIONS, key, deps.now());
    },
  };
}
