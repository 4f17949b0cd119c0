/**
 * The migration's status and metadata after a pass (reference §d.2 step 2, §d.3 "every pass" and
 * "final migration"), pure: phase and its transition timestamps, `status.migrationState`
 * (source pod and node while Pending; the VMI's state, copied, once final), the
 * `migrationAbortRequested` condition, the `kubevirt.io/vmi-name` label, the API-version
 * annotations and the `kubevirt.io/migrationJobFinalize` finalizer (held while unfinished, so the
 * controller always sees the end and gives its leases back). `reconcile.ts` writes the difference.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationCondition } from '../../shared/api/index.ts';
import { LATEST_OBSERVED_API_VERSION_ANNOTATION, MIGRATION_FINALIZER, MIGRATION_REJECTED_BY_QUOTA_CONDITION, STORAGE_OBSERVED_API_VERSION_ANNOTATION } from '../../shared/api/well-known.ts';
import type { PersistentStatePvcs } from './backend-storage.ts';
import { isFinal, type PhaseResult } from './phases.ts';

export const VMI_NAME_LABEL = 'kubevirt.io/vmi-name';
export const ABORT_REQUESTED_CONDITION = 'migrationAbortRequested';
/** Set when the target pod was refused for exceeding a quota; a quota change wakes such migrations (wakes.ts). */
export const REJECTED_BY_QUOTA_CONDITION = MIGRATION_REJECTED_BY_QUOTA_CONDITION;

export interface StatusInput {
  readonly migration: VirtualMachineInstanceMigration;
  readonly vmi: VirtualMachineInstance | undefined;
  readonly result: PhaseResult;
  readonly sourcePod: V1Pod | undefined;
  /** ISO timestamp of this pass. */
  readonly now: string;
  /** The backend PVCs the target pod was created with this pass (backend-storage.ts). */
  readonly persistentStatePvcs?: PersistentStatePvcs | undefined;
  /** This pass's target pod was refused for exceeding the namespace's quota. */
  readonly rejectedByQuota?: boolean | undefined;
}

/** The migration as it should be after this pass. Never mutates its input. */
export function computeMigration(input: StatusInput): VirtualMachineInstanceMigration {
  const { result, vmi, now } = input;
  const m = structuredClone(input.migration);
  const meta = (m.metadata ??= {});
  const status = (m.status ??= {});
  const vmiName = m.spec.vmiName ?? '';

  meta.labels = { ...meta.labels, [VMI_NAME_LABEL]: vmiName };
  meta.annotations = { ...meta.annotations, [LATEST_OBSERVED_API_VERSION_ANNOTATION]: 'v1', [STORAGE_OBSERVED_API_VERSION_ANNOTATION]: 'v1' };

  status.phase = result.phase;
  if (result.steps.length > 0) {
    status.phaseTransitionTimestamps = [...(status.phaseTransitionTimestamps ?? []), ...result.steps.map((phase) => ({ phase, phaseTransitionTimestamp: now }))];
  }
  // Before the hand-off the migration remembers where it leaves from: the source node's lease is
  // given back by that name even after the VMI has moved.
  if ((result.phase === 'Pending' || result.phase === 'Scheduling') && vmi?.status?.nodeName && !status.migrationState?.sourceNode) {
    status.migrationState = { ...status.migrationState, sourceNode: vmi.status.nodeName, ...(input.sourcePod?.metadata?.name ? { sourcePod: input.sourcePod.metadata.name } : {}) };
  }
  if (input.persistentStatePvcs) {
    status.migrationState = { ...status.migrationState, sourcePersistentStatePVCName: input.persistentStatePvcs.source, targetPersistentStatePVCName: input.persistentStatePvcs.target };
  }
  if (isFinal(result.phase)) {
    const vmiState = vmi?.status?.migrationState;
    // The VMI's state, copied; the backend PVC names stay the migration's own record.
    const own = status.migrationState;
    const pvcs = { ...(own?.sourcePersistentStatePVCName && { sourcePersistentStatePVCName: own.sourcePersistentStatePVCName }), ...(own?.targetPersistentStatePVCName && { targetPersistentStatePVCName: own.targetPersistentStatePVCName }) };
    if (vmiState && vmiState.migrationUid === meta.uid) status.migrationState = { ...pvcs, ...structuredClone(vmiState) };
    if (result.failure && !status.migrationState?.failureReason) {
      status.migrationState = { ...status.migrationState, failed: true, failureReason: result.failure };
    }
  }
  // KubeVirt adds the quota condition once, while Pending, and drops it in Scheduling.
  const hasQuotaCondition = status.conditions?.some((c) => c.type === REJECTED_BY_QUOTA_CONDITION) === true;
  if (input.rejectedByQuota && result.phase === 'Pending' && !hasQuotaCondition) {
    status.conditions = [...(status.conditions ?? []), { type: REJECTED_BY_QUOTA_CONDITION, status: 'True', lastProbeTime: now }];
  }
  const scheduling = input.migration.status?.phase === 'Scheduling' || result.steps.includes('Scheduling');
  if (scheduling && hasQuotaCondition) status.conditions = status.conditions?.filter((c) => c.type !== REJECTED_BY_QUOTA_CONDITION);
  if (result.abortRequested) status.conditions = withCondition(status.conditions, { type: ABORT_REQUESTED_CONDITION, status: 'True', lastProbeTime: null, lastTransitionTime: now });

  const finalizers = meta.finalizers ?? [];
  if (isFinal(result.phase)) {
    if (finalizers.includes(MIGRATION_FINALIZER)) meta.finalizers = finalizers.filter((f) => f !== MIGRATION_FINALIZER);
  } else if (!meta.deletionTimestamp && !finalizers.includes(MIGRATION_FINALIZER)) {
    meta.finalizers = [...finalizers, MIGRATION_FINALIZER];
  }
  return m;
}

function withCondition(conds: VirtualMachineInstanceMigrationCondition[] | undefined, c: VirtualMachineInstanceMigrationCondition): VirtualMachineInstanceMigrationCondition[] {
  const list = conds ?? [];
  const old = list.find((x) => x.type === c.type);
  if (old && old.status === c.status) return list;
  return [...list.filter((x) => x.type !== c.type), c];
}

export interface WritePlan {
  readonly status: boolean;
  readonly metadata: boolean;
}

/** Which of the two writes (status subresource, object) the change needs. */
export function planWrites(before: VirtualMachineInstanceMigration, after: VirtualMachineInstanceMigration): WritePlan {
  const b = before.metadata ?? {};
  const a = after.metadata ?? {};
  return {
    status: !isDeepStrictEqual(before.status ?? {}, after.status ?? {}),
    metadata: !isDeepStrictEqual(b.labels ?? {}, a.labels ?? {}) || !isDeepStrictEqual(b.annotations ?? {}, a.annotations ?? {}) || !isDeepStrictEqual(b.finalizers ?? [], a.finalizers ?? []),
  };
}
