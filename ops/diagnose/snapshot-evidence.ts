/**
 * Gathers what the snapshot verdicts need (snapshot-verdicts.ts): the VirtualMachineSnapshot, its
 * source VM, its content (error, VolumeSnapshots not ready), dead letters and traces. Reads only.
 */
import { parseDurationMs } from '../../shared/api/go-duration.ts';
import { VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMS } from '../../shared/api/resources.ts';
import { DEFAULT_FAILURE_DEADLINE_MS } from '../../functions/snapshot/names.ts';
import type { SnapshotEvidence } from './snapshot-verdicts.ts';
import { conditionView, epoch } from './views.ts';
import type { EvidenceSources } from './vmi-evidence.ts';

export async function gatherSnapshotEvidence(src: EvidenceSources, namespace: string, name: string): Promise<SnapshotEvidence> {
  const key = `${namespace}/${name}`;
  const [raw, deadLetters, traces] = await Promise.all([src.cluster.get(VM_SNAPSHOTS, namespace, name), src.queue.listDeadLetters({ key }), src.state.traces.recent('snapshot', key, src.now)]);
  const base = { now: src.now, key, deadLetters: deadLetters.filter((d) => d.controller === 'snapshot'), traces };
  if (!raw) return { ...base, sourceExists: false };
  const status = raw.status ?? {};
  const sourceName = raw.spec?.source?.name ?? '';
  const contentName = status.virtualMachineSnapshotContentName ?? undefined;
  const [vm, content] = await Promise.all([
    sourceName ? src.cluster.get(VMS, namespace, sourceName) : Promise.resolve(undefined),
    contentName ? src.cluster.get(VM_SNAPSHOT_CONTENTS, namespace, contentName) : Promise.resolve(undefined),
  ]);
  const deadline = raw.spec?.failureDeadline;
  const deadlineMs = deadline === undefined ? DEFAULT_FAILURE_DEADLINE_MS : (parseDurationMs(deadline) ?? DEFAULT_FAILURE_DEADLINE_MS);
  const error = status.error?.message ?? undefined;
  const contentError = content?.status?.error?.message ?? undefined;
  return {
    ...base,
    sourceExists: vm !== undefined,
    snapshot: {
      name,
      resourceVersion: raw.metadata?.resourceVersion ?? '',
      phase: status.phase ?? '',
      readyToUse: status.readyToUse === true,
      sourceKind: raw.spec?.source?.kind ?? 'VirtualMachine',
      sourceName,
      createdAt: epoch(raw.metadata?.creationTimestamp as string | Date | undefined),
      deadlineMs,
      ...(error ? { error } : {}),
      conditions: (status.conditions ?? []).map(conditionView),
      ...(contentName ? { contentName } : {}),
    },
    ...(content
      ? {
          content: {
            ...(contentError ? { error: contentError } : {}),
            unready: (content.status?.volumeSnapshotStatus ?? []).filter((v) => v.readyToUse !== true).map((v) => ({ name: v.volumeSnapshotName, ...(v.error?.message ? { error: v.error.message } : {}) })),
          },
        }
      : {}),
  };
}
