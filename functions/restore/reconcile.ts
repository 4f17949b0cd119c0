/**
 * KubeVirt's restore controller as one stateless reconcile (reference §2.3): the first status
 * alone → the target → deletion → nothing more once complete or failed → owner reference and
 * finalizer → the target must be stopped (the readiness policy) → the snapshot and its content
 * must be ready → the target VM's `status.restoreInProgress` → the restore PVCs → the target VM
 * → cleanup → `restoreInProgress` cleared → complete. Each step that changes something writes the
 * status and ends the pass; the next comes from that write, a PVC or DataVolume of the restore,
 * the target VM, or the snapshot (our addition: KubeVirt retries with backoff instead).
 *
 * Errors take KubeVirt's error path: `Progressing` and `Ready` False with the error as reason on
 * the restore *as read* (quirk 5), a `VirtualMachineRestoreError` Warning, and a retry with
 * backoff (the queue dead-letters a key that keeps failing, so nothing is retried forever).
 */
import { isDeepStrictEqual } from 'node:util';
import { DATA_VOLUMES, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { RestoreStatus, VirtualMachineRestore, VirtualMachineSnapshot, VirtualMachineSnapshotContent } from '../../shared/api/snapshot.ts';
import { errorText, InvalidInputError, TransientError } from '../../shared/errors.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { removeFinalizerOps } from '../../shared/kube/finalizer-ops.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { conditionOf, updateCondition } from '../../shared/storage/conditions.ts';
import type { VmLike } from '../../shared/storage/vm-volumes.ts';
import { cleanupBackend } from './backend.ts';
import type { RestoreDeps } from './deps.ts';
import { restoreEvent } from './events.ts';
import { DEFAULT_GRACE_PERIOD_MS, INITIALIZING, LAST_RESTORE_UID_ANNOTATION, OPERATION_COMPLETE, RESTORE_FINALIZER, restoreAnnotationValue } from './names.ts';
import type { RestoreVm } from './restored-vm.ts';
import { reconcileTarget } from './target.ts';
import { reconcileVolumeRestores, RestoreStepError } from './volumes.ts';
import { writeStatus as writeObjectStatus } from '../../shared/reconcile/write-status.ts';

type Conditions = RestoreStatus['conditions'];

/** Progressing and Ready, both with `reason` (and Failure when failing). */
function withConditions(status: RestoreStatus, progressing: boolean, ready: boolean, reasons: [string, string], nowIso: string, failure?: string): RestoreStatus {
  let c: Conditions = status.conditions;
  c = updateCondition(c, 'Progressing', progressing ? 'True' : 'False', reasons[0], nowIso);
  c = updateCondition(c, 'Ready', ready ? 'True' : 'False', reasons[1], nowIso);
  if (failure !== undefined) c = updateCondition(c, 'Failure', 'True', failure, nowIso);
  return { ...status, conditions: c };
}

const isFailed = (r: VirtualMachineRestore) => conditionOf(r.status?.conditions, 'Failure') !== undefined;
const printRef = (t: { apiGroup?: string; kind?: string; name?: string } | undefined) => `{APIGroup:${t?.apiGroup ?? '<nil>'} Kind:${t?.kind ?? ''} Name:${t?.name ?? ''}}`;

function writeStatus(r: VirtualMachineRestore, status: RestoreStatus, deps: RestoreDeps): Promise<VirtualMachineRestore | undefined> {
  return writeObjectStatus(deps.kube, VM_RESTORES, r, status);
}

interface ErrorPathOptions {
  /** The failure path: `Failure`=True, after which the restore is never reconciled again. */
  readonly fail?: boolean;
  /** Retrying cannot help (dead-lettered at once). */
  readonly permanent?: boolean;
  /** What is missing comes as an event of this restore's (RestoreStepError.wait): no retry. */
  readonly wait?: boolean;
  /**
   * The restore as this pass last wrote it (its metadata update), when not `input`: the
   * conditions go onto the status *as read* (quirk 5), written over the latest resourceVersion
   * (KubeVirt's write of the stale copy conflicts and is retried into the same result).
   */
  readonly latest?: VirtualMachineRestore;
}

/** §2.2's error path: Progressing and Ready False with the error as reason, a Warning, the status written. */
async function errorPath(input: VirtualMachineRestore, message: string, deps: RestoreDeps, opts: ErrorPathOptions = {}): Promise<Outcome> {
  const nowIso = new Date(deps.now()).toISOString();
  const status = withConditions(structuredClone(input.status ?? {}), false, false, [message, message], nowIso, opts.fail ? message : undefined);
  if (opts.fail) await restoreEvent(deps, input, 'Warning', 'Operation failed', `VirtualMachineRestore failed ${message}`);
  else await restoreEvent(deps, input, 'Warning', 'VirtualMachineRestoreError', `VirtualMachineRestore encountered error ${message}`);
  await writeStatus(opts.latest ?? input, status, deps);
  if (opts.fail || opts.wait) return done;
  if (opts.permanent) throw new InvalidInputError('spec', message, 'VirtualMachineRestoreError');
  throw new TransientError('VirtualMachineRestoreError', message);
}

/** Reconciles the restore named by `key` (`namespace/name`). */
export async function reconcileRestore(key: string, deps: RestoreDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const input = await deps.kube.get(VM_RESTORES, namespace, name, { resourceVersion: ctx.minResourceVersion });
  if (!input) return done;
  const nowIso = new Date(deps.now()).toISOString();

  // 1. the first pass writes the first status only
  if (!input.status) {
    await writeStatus(input, withConditions({ complete: false }, true, false, [INITIALIZING, INITIALIZING], nowIso), deps);
    return done;
  }

  // 2. the target: a VirtualMachine, which may not exist yet
  const ref = input.spec?.target;
  if (ref?.kind !== 'VirtualMachine') return errorPath(input, `unknown source ${printRef(ref)}`, deps, { permanent: true });
  let target = (await deps.kube.get(VMS, namespace, ref.name ?? '')) as unknown as RestoreVm | undefined;

  // 3–4. deletion; a complete or failed restore is done
  if (input.metadata?.deletionTimestamp) return deleting(input, target, deps);
  if (input.status.complete === true || isFailed(input)) return done;

  // 5. owned by the target, held by the finalizer
  let r = input;
  const meta = structuredClone(r.metadata ?? {});
  if ((meta.ownerReferences ?? []).length === 0 && target) {
    meta.ownerReferences = [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: target.metadata?.name ?? '', uid: target.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }];
  }
  if (!(meta.finalizers ?? []).includes(RESTORE_FINALIZER)) meta.finalizers = [...(meta.finalizers ?? []), RESTORE_FINALIZER];
  if (!isDeepStrictEqual(meta, r.metadata)) r = await deps.kube.update(VM_RESTORES, { ...r, metadata: meta });

  // 6. the target must be stopped
  const vmi = target ? await deps.kube.get(VMIS, namespace, ref.name ?? '') : undefined;
  if (vmi) return targetNotReady(r, deps);

  try {
    // 7. a ready snapshot and content
    const { snapshot, content } = await readySnapshot(r, deps);

    // 8. an existing target must be the snapshot's source
    const targetRestored = target?.metadata?.annotations?.[LAST_RESTORE_UID_ANNOTATION] === restoreAnnotationValue(r);
    if (target && !targetRestored && snapshot.status?.sourceUID !== target.metadata?.uid) throw new RestoreStepError('restore source and restore target are different but restore target already exists', true);

    // 9. the target is ours while we work on it
    if (target && !targetRestored) {
      const holder = target.status?.restoreInProgress as string | undefined;
      if (holder && holder !== name) throw new TransientError('RestoreInProgress', `vm restore ${holder} in progress`);
      if (!holder) target = await setRestoreInProgress(target, name, deps);
    }

    // 10. the restore PVCs
    const volumes = await reconcileVolumeRestores(r, content, target, deps);
    if (volumes.updated) {
      const status = withConditions({ ...structuredClone(r.status ?? {}), restores: volumes.restores }, true, false, ['Creating new PVCs', 'Waiting for new PVCs'], nowIso);
      await writeStatus(r, status, deps);
      return done;
    }

    // 11. the target VM
    const t = await reconcileTarget(r, content, volumes.restores, target, targetRestored, deps);
    if (t.updated) {
      const status = withConditions({ ...structuredClone(r.status ?? {}), restores: t.restores, ...(t.deletedDataVolumes ? { deletedDataVolumes: t.deletedDataVolumes } : {}) }, true, false, ['Updating target spec', 'Waiting for target update'], nowIso);
      await writeStatus(r, status, deps);
      return done;
    }

    // 12. cleanup: the DataVolumes the restored VM no longer names
    for (const dv of r.status?.deletedDataVolumes ?? []) await deps.kube.delete(DATA_VOLUMES, namespace, dv);
    // and the backend claims the target gave up
    if (target) await cleanupBackend(namespace, target as VmLike, deps);

    // 13. the target is free again
    if (!target) throw new RestoreStepError('At this point target should exist');
    await doneRestore(target, name, deps);
  } catch (err) {
    if (err instanceof RestoreStepError) return errorPath(input, err.message, deps, { wait: err.wait, latest: r });
    throw err;
  }

  // 14. complete
  await restoreEvent(deps, r, 'Normal', 'VirtualMachineRestoreComplete', `Successfully completed VirtualMachineRestore ${name}`);
  const status = withConditions({ ...structuredClone(r.status ?? {}), complete: true, restoreTime: nowIso }, false, true, [OPERATION_COMPLETE, OPERATION_COMPLETE], nowIso);
  await writeStatus(r, status, deps);
  return done;
}

/** §2.2's snapshot and content checks, with KubeVirt's texts. */
async function readySnapshot(r: VirtualMachineRestore, deps: RestoreDeps): Promise<{ snapshot: VirtualMachineSnapshot; content: VirtualMachineSnapshotContent }> {
  const ns = r.metadata?.namespace ?? '';
  const sname = r.spec?.virtualMachineSnapshotName ?? '';
  const snapshot = await deps.kube.get(VM_SNAPSHOTS, ns, sname);
  if (!snapshot) throw new RestoreStepError(`VMSnapshot ${ns}/${sname} does not exist`, true);
  if (snapshot.status?.phase === 'Failed') throw new RestoreStepError(`VMSnapshot ${ns}/${sname} failed and is invalid to use`, true);
  if (snapshot.status?.readyToUse !== true) throw new RestoreStepError(`VMSnapshot ${ns}/${sname} not ready`, true);
  const contentName = snapshot.status.virtualMachineSnapshotContentName;
  if (!contentName) throw new RestoreStepError(`no snapshot content name in ${ns}/${sname}`, true);
  const content = await deps.kube.get(VM_SNAPSHOT_CONTENTS, ns, contentName);
  if (!content) throw new RestoreStepError(`VMSnapshotContent ${ns}/${contentName} does not exist`, true);
  if (content.status?.readyToUse !== true) throw new RestoreStepError(`VMSnapshotContent ${ns}/${contentName} not ready`, true);
  return { snapshot, content };
}

async function patchVmStatus(vm: RestoreVm, ops: Parameters<RestoreDeps['kube']['patch']>[3], deps: RestoreDeps): Promise<RestoreVm> {
  return (await deps.kube.patch(VMS, vm.metadata?.namespace ?? '', vm.metadata?.name ?? '', ops, { subresource: 'status' })) as unknown as RestoreVm;
}

function setRestoreInProgress(vm: RestoreVm, name: string, deps: RestoreDeps): Promise<RestoreVm> {
  const ops = vm.status
    ? [{ op: 'test' as const, path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add' as const, path: '/status/restoreInProgress', value: name }]
    : [{ op: 'test' as const, path: '/metadata/resourceVersion', value: vm.metadata?.resourceVersion }, { op: 'add' as const, path: '/status', value: { restoreInProgress: name } }];
  return patchVmStatus(vm, { type: 'json', ops }, deps);
}

/** UpdateDoneRestore: `restoreInProgress` (and `memoryDumpRequest`) cleared when this restore holds it. */
async function doneRestore(vm: RestoreVm, name: string, deps: RestoreDeps): Promise<void> {
  if (vm.status?.restoreInProgress !== name) return;
  const ops = [{ op: 'test' as const, path: '/status/restoreInProgress', value: name }, { op: 'remove' as const, path: '/status/restoreInProgress' }];
  if (vm.status.memoryDumpRequest !== undefined) ops.push({ op: 'remove' as const, path: '/status/memoryDumpRequest' } as never);
  await patchVmStatus(vm, { type: 'json', ops }, deps);
}

/**
 * §2.5: the target VM still runs. The default `WaitGracePeriod` waits (and here wakes itself at
 * the end of the grace period, where KubeVirt waits for any event); `StopTarget` asks virt-api to
 * stop it; `FailImmediate` fails; `WaitEventually` waits.
 */
async function targetNotReady(r: VirtualMachineRestore, deps: RestoreDeps): Promise<Outcome> {
  const nowMs = deps.now();
  const nowIso = new Date(nowMs).toISOString();
  const policy = r.spec?.targetReadinessPolicy ?? 'WaitGracePeriod';
  const ns = r.metadata?.namespace ?? '';
  const waitText = 'Waiting for target VM to be powered off. Please stop the restore target to proceed with restore';
  switch (policy) {
    case 'FailImmediate':
      return errorPath(r, 'Restore target VMI must be powered off before restore operation', deps, { fail: true });
    case 'StopTarget': {
      const text = 'Automatically stopping restore target for restore operation';
      await restoreEvent(deps, r, 'Warning', 'RestoreTargetNotReady', text);
      const written = await writeStatus(r, withConditions(structuredClone(r.status ?? {}), false, false, [text, text], nowIso), deps);
      if (!written) return done;
      try {
        await deps.virtApi.put('virtualmachines', ns, r.spec?.target?.name ?? '', 'stop', {});
      } catch (err) {
        return errorPath(r, errorText(err), deps, { latest: written });
      }
      return done;
    }
    case 'WaitEventually':
      await restoreEvent(deps, r, 'Warning', 'RestoreTargetNotReady', 'Restore target VMI still exists, please stop the restore target to proceed with restore');
      await writeStatus(r, withConditions(structuredClone(r.status ?? {}), false, false, [waitText, waitText], nowIso), deps);
      return done;
    default: {
      const deadline = Date.parse(r.metadata?.creationTimestamp ?? '') + DEFAULT_GRACE_PERIOD_MS;
      if (nowMs > deadline) return errorPath(r, 'Restore target failed to be ready within 5m0s. Please power off the target VM before attempting restore', deps, { fail: true });
      const text = `${waitText}, or the operation will fail after 5m0s`;
      await restoreEvent(deps, r, 'Warning', 'RestoreTargetNotReady', 'Restore target VMI still exists, please stop the restore target to proceed with restore');
      await writeStatus(r, withConditions(structuredClone(r.status ?? {}), false, false, [text, text], nowIso), deps);
      return requeueAfter(Math.max(0.05, (deadline - nowMs + 1000) / 1000 / (deps.clockSpeed ?? 1)), 'restore grace period');
    }
  }
}

/** §2.6: the target let go, `VM restore is deleting` written, then (next pass) the finalizer removed. */
async function deleting(r: VirtualMachineRestore, target: RestoreVm | undefined, deps: RestoreDeps): Promise<Outcome> {
  if (!(r.metadata?.finalizers ?? []).includes(RESTORE_FINALIZER)) return done;
  if (target) await doneRestore(target, r.metadata?.name ?? '', deps);
  const nowIso = new Date(deps.now()).toISOString();
  const text = 'VM restore is deleting';
  const status = withConditions(structuredClone(r.status ?? {}), false, false, [text, text], nowIso);
  if (!isDeepStrictEqual(status, r.status)) {
    await writeStatus(r, status, deps);
    return done;
  }
  try {
    await deps.kube.patch(VM_RESTORES, r.metadata?.namespace ?? '', r.metadata?.name ?? '', { type: 'json', ops: removeFinalizerOps(r, RESTORE_FINALIZER) });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  return done;
}
