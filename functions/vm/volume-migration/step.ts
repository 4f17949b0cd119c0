/**
 * The VM reconcile's volume-update step (reference-vm-vmi-depth §7, KubeVirt's
 * `handleVolumeUpdateRequest`), the last live-update handler: under
 * `spec.updateVolumesStrategy: Migration`, a running VMI whose template claims changed gets
 * `status.migratedVolumes` and its volumes pointed at the new claims, in one tested JSON patch (the
 * VMI controller then marks it `VolumesChange=True` and the workload updater migrates it); a
 * missing destination → `VolumesChange=False` on the VMI; volumes that cannot be migrated →
 * `RestartRequired`; the template set back mid-migration → the migration cancelled. The VM's
 * `status.volumeUpdateState` goes to the status write (status.ts).
 */
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceCondition, VolumeUpdateState } from '../../../shared/api/index.ts';
import { DATA_VOLUMES, PVCS, VMIS } from '../../../shared/api/resources.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';
import { VOLUMES_CHANGE_CANCELLATION_REASON, VOLUMES_CHANGE_CONDITION, volumeMigrationProblem } from '../../../shared/storage/volume-migration.ts';
import type { VmDeps } from '../deps.ts';
import type { SyncError } from '../sync.ts';
import { INVALID_UPDATE_MESSAGE, cancellation, migratedVolumes, updatedVolumes, validateVolumes, volumesWithTemplate, withCondition, type ClaimReader } from './decide.ts';
import { isDeepStrictEqual } from 'node:util';
import { errorText } from '../../../shared/errors.ts';

export interface VolumeUpdateResult {
  readonly vmi: VirtualMachineInstance;
  /** A `RestartRequired` message (the volumes cannot be migrated). */
  readonly restartMessage?: string;
  /** `status.volumeUpdateState` for the status write; undefined leaves it as read. */
  readonly volumeUpdateState?: VolumeUpdateState;
  readonly error?: SyncError;
}

const REASON = 'VolumesUpdateError';
const PREFIX = 'error encountered while handling volumes update requests: ';
const syncError = (message: string): SyncError => ({ reason: REASON, message: `${PREFIX}${message}`, requeue: true });

/** Runs the handler for the VM's live VMI (LiveUpdate, no restart pending). */
export async function syncVolumeUpdate(vm: VirtualMachine, vmi: VirtualMachineInstance, deps: VmDeps): Promise<VolumeUpdateResult> {
  try {
    return await handle(vm, vmi, deps);
  } catch (err) {
    return { vmi, error: syncError(errorText(err)) };
  }
}

async function handle(vm: VirtualMachine, vmi: VirtualMachineInstance, deps: VmDeps): Promise<VolumeUpdateResult> {
  const now = new Date(deps.now()).toISOString();
  // A migrated volume changed again: only a return to the source claims cancels the migration.
  const cancel = cancellation(vmi, vm);
  if (cancel === 'invalid') return { vmi, error: syncError(INVALID_UPDATE_MESSAGE) };
  if (cancel === 'revert') {
    const names = new Set((vmi.status?.migratedVolumes ?? []).map((m) => m.volumeName));
    const conditions = withCondition(vmi.status?.conditions ?? [], cond('False', VOLUMES_CHANGE_CANCELLATION_REASON, undefined, now));
    const ops = [
      ...listOps('/spec/volumes', vmi.spec.volumes, volumesWithTemplate(vmi.spec.volumes ?? [], names, vm)),
      ...listOps('/status/conditions', vmi.status?.conditions, conditions),
      ...listOps('/status/migratedVolumes', vmi.status?.migratedVolumes, undefined),
    ];
    return { vmi: await patchVmi(vmi, ops, deps) };
  }

  const strategy = vm.spec.updateVolumesStrategy;
  if (strategy === undefined || strategy === 'Replacement') return { vmi };
  if (strategy !== 'Migration') return { vmi, error: { reason: REASON, message: `${PREFIX}updateVolumes strategy not recognized: ${strategy}`, requeue: true } };
  if (updatedVolumes(vmi, vm).size === 0) return { vmi };

  const read = claimReader(vm.metadata?.namespace ?? '', deps);
  const validation = await validateVolumes(vmi, vm, read);
  if (validation.kind === 'not-found') {
    // Reported on the VMI (and mirrored to the VM); the VM waits for the claim to appear.
    const conditions = withCondition(vmi.status?.conditions ?? [], cond('False', undefined, validation.message, now));
    return { vmi: await patchVmi(vmi, listOps('/status/conditions', vmi.status?.conditions, conditions), deps) };
  }
  if (validation.kind === 'invalid') return { vmi, restartMessage: validation.message };
  // Valid now: a VolumesChange=False left from an earlier attempt goes.
  const kept = (vmi.status?.conditions ?? []).filter((c) => c.type !== VOLUMES_CHANGE_CONDITION);
  let current = await patchVmi(vmi, listOps('/status/conditions', vmi.status?.conditions, kept.length > 0 ? kept : undefined), deps);

  const infos = await migratedVolumes(current, vm, read);
  const problem = infos.length === 0 ? undefined : volumeMigrationProblem(current, infos.map((m) => m.volumeName));
  if (problem !== undefined) return { vmi: current, restartMessage: problem };
  // The migrated volumes are written once; the volumes follow the VMI's recorded set. KubeVirt
  // writes them in two patches (and, its VMI variable not refreshed, two passes); one tested patch
  // here does both at once, so no one ever sees the volumes moved without their source recorded.
  const recorded = current.status?.migratedVolumes ?? [];
  const migrated = recorded.length > 0 ? recorded : infos;
  const names = new Set(migrated.map((m) => m.volumeName));
  const ops = [
    ...(recorded.length === 0 && infos.length > 0 ? listOps('/status/migratedVolumes', undefined, infos) : []),
    ...listOps('/spec/volumes', current.spec.volumes, volumesWithTemplate(current.spec.volumes ?? [], names, vm)),
  ];
  current = await patchVmi(current, ops, deps);
  const volumeUpdateState: VolumeUpdateState = { ...vm.status?.volumeUpdateState, ...(infos.length > 0 ? { volumeMigrationState: { migratedVolumes: infos } } : {}) };
  return { vmi: current, volumeUpdateState };
}

/** Reads go straight to the API: they happen only in the passes where the template's claims differ from the VMI's. */
function claimReader(namespace: string, deps: VmDeps): ClaimReader {
  const pvcs = new Map<string, ReturnType<ClaimReader['pvc']>>();
  return {
    // Memoized: validation and the volume infos ask for the same claims.
    pvc: (name) => {
      let p = pvcs.get(name);
      if (!p) pvcs.set(name, (p = deps.kube.get(PVCS, namespace, name)));
      return p;
    },
    dataVolume: (name) => deps.kube.get(DATA_VOLUMES, namespace, name),
  };
}

function cond(status: 'True' | 'False', reason: string | undefined, message: string | undefined, now: string): VirtualMachineInstanceCondition {
  return { type: VOLUMES_CHANGE_CONDITION, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}), lastProbeTime: null, lastTransitionTime: now };
}

/**
 * The ops that take `path` from `before` to `after`: nothing when equal; `test` + `replace`,
 * `test` null + `add` when absent, `test` + `remove` when `after` is undefined.
 */
function listOps(path: string, before: unknown, after: unknown): JsonPatchOperation[] {
  if (isDeepStrictEqual(before ?? null, after ?? null)) return [];
  if (after === undefined) return [{ op: 'test', path, value: before }, { op: 'remove', path }];
  if (before === undefined) return [{ op: 'test', path, value: null }, { op: 'add', path, value: after }];
  return [{ op: 'test', path, value: before }, { op: 'replace', path, value: after }];
}

async function patchVmi(vmi: VirtualMachineInstance, ops: JsonPatchOperation[], deps: VmDeps): Promise<VirtualMachineInstance> {
  if (ops.length === 0) return vmi;
  return deps.kube.patch(VMIS, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '', { type: 'json', ops });
}
