/**
 * Gathers what the restore verdicts need (restore-verdicts.ts): the VirtualMachineRestore, its
 * target VM's `restoreInProgress`, the restored claims that are not Bound, dead letters and
 * traces. Reads only.
 */
import { PVCS, VM_RESTORES, VMS } from '../../shared/api/resources.ts';
import type { RestoreEvidence } from './restore-verdicts.ts';
import { conditionView, epoch } from './views.ts';
import type { EvidenceSources } from './vmi-evidence.ts';

export async function gatherRestoreEvidence(src: EvidenceSources, namespace: string, name: string): Promise<RestoreEvidence> {
  const key = `${namespace}/${name}`;
  const [raw, deadLetters, traces] = await Promise.all([src.cluster.get(VM_RESTORES, namespace, name), src.queue.listDeadLetters({ key }), src.state.traces.recent('restore', key, src.now)]);
  const base = { now: src.now, key, deadLetters: deadLetters.filter((d) => d.controller === 'restore'), traces, unboundClaims: [] };
  if (!raw) return base;
  const targetName = raw.spec?.target?.name ?? '';
  const claims = (raw.status?.restores ?? []).map((e) => e.persistentVolumeClaim);
  const [vm, pvcs] = await Promise.all([targetName ? src.cluster.get(VMS, namespace, targetName) : Promise.resolve(undefined), Promise.all(claims.map((c) => src.cluster.get(PVCS, namespace, c)))]);
  const heldBy = vm?.status?.restoreInProgress;
  return {
    ...base,
    ...(heldBy ? { targetHeldBy: heldBy } : {}),
    unboundClaims: claims.map((c, i) => ({ name: c, phase: pvcs[i]?.status?.phase ?? '' })).filter((c) => c.phase !== 'Bound'),
    restore: {
      name,
      resourceVersion: raw.metadata?.resourceVersion ?? '',
      complete: raw.status?.complete === true,
      deleting: raw.metadata?.deletionTimestamp !== undefined && raw.metadata?.deletionTimestamp !== null,
      targetName,
      snapshotName: raw.spec?.virtualMachineSnapshotName ?? '',
      createdAt: epoch(raw.metadata?.creationTimestamp as string | Date | undefined),
      conditions: (raw.status?.conditions ?? []).map(conditionView),
    },
  };
}
