/**
 * Which PodDisruptionBudgets the disruption-budget controller deletes (reference
 * node-drain-updates §4): at this KubeVirt version it only cleans up PDBs an older KubeVirt
 * created — any PDB in the VMI's namespace whose controller owner is a VirtualMachineInstance of
 * that name. The UID is not compared, so a PDB left by an earlier VMI of the same name goes too.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';

/** The VMI (`ns/name`) controlling a PDB, if a VMI does. */
export function pdbOwnerKey(pdb: V1PodDisruptionBudget): string | undefined {
  const owner = pdb.metadata?.ownerReferences?.find((r) => r.controller);
  return owner?.kind === 'VirtualMachineInstance' ? `${pdb.metadata?.namespace ?? ''}/${owner.name}` : undefined;
}

/** The PDBs to delete for a VMI key: owned by that name, not already terminating. */
export function legacyPdbsToDelete(pdbs: readonly V1PodDisruptionBudget[], namespace: string, vmiName: string): V1PodDisruptionBudget[] {
  return pdbs.filter((p) => p.metadata?.namespace === namespace && pdbOwnerKey(p) === `${namespace}/${vmiName}` && !p.metadata?.deletionTimestamp);
}
