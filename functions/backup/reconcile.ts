/**
 * KubeVirt's VirtualMachineBackup controller (`pkg/storage/cbt`) as one stateless reconcile
 * (reference-snapshot-export-backup.md §4): a backup goes start → active → completed following
 * the VMI's `status.changedBlockTracking.backupStatus`, which virt-handler fills asynchronously
 * after the `backup` Start command; the target claim is hotplugged as a utility volume first and
 * detached (with `backupStatus` cleared) before the backup may end. The status is written even
 * when the pass ends in an error ("cleanup pending" is the expected one), and there are no timers:
 * VMI, tracker and backup events bring the key back.
 *
 * The same key also names a VirtualMachineBackupTracker: its checkpoint is redefined first when
 * virt-handler asks for it (§4.5). KubeVirt has a second queue for trackers; here one queue serves
 * both kinds, so a tracker and a backup of the same name only share their serialization.
 */
import { isDeepStrictEqual } from 'node:util';
import type { VirtualMachineInstance, VirtualMachineInstanceBackupStatus } from '../../shared/api/index.ts';
import type { VirtualMachineBackup, VirtualMachineBackupStatus, VirtualMachineBackupTracker } from '../../shared/api/backup.ts';
import { PVCS, VM_BACKUP_TRACKERS, VM_BACKUPS, VM_EXPORTS, VMIS, VMS } from '../../shared/api/resources.ts';
import { errorText, TransientError } from '../../shared/errors.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import type { Patch } from '../../shared/kube/client.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { isWorkerCrash } from '../../shared/reconcile/worker-crash.ts';
import { isTerminal, setComplete, setFailed, setInitializing, setProgressing, setQuiesced } from './conditions.ts';
import { backupStatusOf, incrementalFrom, needsRedefinition, outcomeOf, stageOf, startOptions, unmetPrerequisite, utilityVolumeAttached, utilityVolumePresent } from './decide.ts';
import type { BackupDeps } from './deps.ts';
import { BACKUP_API_VERSION, BACKUP_FINALIZER, CLEANUP_PENDING, COND, EVENT, KIND_BACKUP, KIND_TRACKER, REASON, utilityVolumeNameOf } from './names.ts';
import { addUtilityVolumePatch, finalizerPatch, redefinitionDonePatch, removeBackupStatusPatch, removeUtilityVolumePatch, startBackupStatusPatch, trackerCheckpointPatch } from './patches.ts';
import { objectRef, recordEvent } from '../../shared/reconcile/events.ts';
import { EVENT_COMPONENT } from '../../shared/reconcile/event-components.ts';
import { writeStatus as writeObjectStatus } from '../../shared/reconcile/write-status.ts';

/** One pass's working state: the backup as last written (metadata), and the status being built. */
interface Pass {
  backup: VirtualMachineBackup;
  readonly status: VirtualMachineBackupStatus;
  readonly deps: BackupDeps;
  readonly nowIso: string;
}

const rfc3339 = (ms: number) => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;

/** Reconciles the backup and/or tracker named by `key` (`namespace/name`). */
export async function reconcileBackup(key: string, deps: BackupDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = { resourceVersion: ctx.minResourceVersion };
  const [backup, tracker] = await Promise.all([deps.kube.get(VM_BACKUPS, namespace, name, rv), deps.kube.get(VM_BACKUP_TRACKERS, namespace, name, rv)]);
  if (tracker && needsRedefinition(tracker)) await redefineCheckpoint(tracker, deps);
  if (!backup) return done;

  const pass: Pass = { backup, status: structuredClone(backup.status ?? {}), deps, nowIso: rfc3339(deps.now()) };
  let failure: unknown;
  try {
    await sync(pass);
  } catch (err) {
    if (isWorkerCrash(err)) throw err;
    failure = err;
  }
  // The status is written even when the pass failed (KubeVirt's `execute`), then the error retries the key.
  await writeStatus(pass);
  if (failure !== undefined) throw failure instanceof TransientError ? failure : new TransientError('BackupSyncFailed', errorText(failure), { cause: failure });
  return done;
}

async function sync(p: Pass): Promise<void> {
  const b = p.backup;
  const ns = b.metadata?.namespace ?? '';
  const name = b.metadata?.name ?? '';
  if (isTerminal(p.status)) {
    if (b.metadata?.deletionTimestamp) await setFinalizer(p, false);
    else await clearLeftBackupStatus(p);
    return;
  }
  let tracker: VirtualMachineBackupTracker | undefined;
  if (b.spec.source.kind === KIND_TRACKER) {
    tracker = await p.deps.kube.get(VM_BACKUP_TRACKERS, ns, b.spec.source.name);
    if (!tracker) return setInitializing(p.status, `BackupTracker ${b.spec.source.name} does not exist`, p.nowIso);
  }
  const source = tracker ? tracker.spec.source.name : b.spec.source.name;
  if (!source) throw new TransientError('InvalidSource', 'source name is empty');
  const vmi = await p.deps.kube.get(VMIS, ns, source);
  const bs = backupStatusOf(vmi, name);
  switch (stageOf(bs)) {
    case 'start':
      return start(p, source, vmi, tracker);
    case 'active':
      return active(p, source, vmi!, bs!);
    case 'completed':
      return completed(p, vmi!, bs!, tracker);
  }
}

async function start(p: Pass, source: string, vmi: VirtualMachineInstance | undefined, tracker: VirtualMachineBackupTracker | undefined): Promise<void> {
  const b = p.backup;
  const ns = b.metadata?.namespace ?? '';
  const name = b.metadata?.name ?? '';
  if (b.metadata?.deletionTimestamp) {
    if (!vmi) return setFinalizer(p, false);
    await cleanupOrPending(p, vmi);
    return fail(p, REASON.deletedDuringInit, 'backup was deleted during initialization');
  }
  if (p.status.type) {
    // It had started, and its backupStatus is gone.
    if (!vmi) return fail(p, REASON.sourceLost, 'VMI was deleted during backup');
    await cleanupOrPending(p, vmi);
    return fail(p, REASON.sourceLost, 'VMI backup status was lost');
  }
  const vm = await p.deps.kube.get(VMS, ns, source);
  const unmet = unmetPrerequisite(ns, source, vm, vmi, tracker, p.deps.now());
  if (unmet !== undefined) return setInitializing(p.status, unmet, p.nowIso);
  const running = vmi!;

  await setFinalizer(p, true);
  const pvcName = b.spec.pvcName;
  if (!pvcName) throw new TransientError('BackupTargetMissing', 'backup target PVC name is nil');
  const pvc = await p.deps.kube.get(PVCS, ns, pvcName);
  if (!pvc) return setInitializing(p.status, `PVC ${ns}/${pvcName} doesnt exist`, p.nowIso);
  if (pvc.spec?.volumeMode === 'Block') throw new TransientError('BackupTargetBlock', `backup target PVC must be a filesystem PVC, provided pvc ${ns}/${pvcName} is block`);

  const volume = utilityVolumeNameOf(name);
  if (!utilityVolumeAttached(running, volume)) {
    // Hotplug the target first; virt-handler attaching it changes the VMI, which brings the key back.
    const patch = addUtilityVolumePatch(running, volume, pvcName);
    if (patch) await p.deps.kube.patch(VMIS, ns, source, patch);
    return;
  }
  // One backup per VMI (upstream's webhook guarantees it; checked before the command here, so a
  // second Start never reaches virt-handler while another backup runs).
  const other = running.status?.changedBlockTracking?.backupStatus?.backupName;
  if (other && other !== name) throw new TransientError('BackupInProgress', `another backup ${other} is already in progress, cannot start backup ${name}`);
  try {
    await p.deps.virtApi.put('virtualmachineinstances', ns, source, 'backup', startOptions(b, tracker));
  } catch (err) {
    throw new TransientError('BackupStartFailed', `failed to send Start backup command: ${errorText(err)}`, { cause: err });
  }
  await p.deps.kube.patch(VMIS, ns, source, startBackupStatusPatch(running, name, b.metadata?.creationTimestamp ? String(b.metadata.creationTimestamp) : undefined));
  setProgressing(p.status, REASON.initiated, 'Backup is in progress', p.nowIso);
  p.status.type = incrementalFrom(b, tracker) !== undefined ? 'Incremental' : 'Full';
}

async function active(p: Pass, source: string, vmi: VirtualMachineInstance, bs: VirtualMachineInstanceBackupStatus): Promise<void> {
  const b = p.backup;
  const ns = b.metadata?.namespace ?? '';
  if (vmi.status?.phase !== 'Running' || vmi.metadata?.deletionTimestamp) {
    await cleanupOrPending(p, vmi);
    return fail(p, REASON.sourceUnhealthy, `VMI is not in a running state: ${vmi.status?.phase ?? ''}`);
  }
  if (b.metadata?.deletionTimestamp) {
    const mode = b.spec.mode ?? 'Push';
    try {
      await p.deps.virtApi.put('virtualmachineinstances', ns, source, 'backup', { backupName: b.metadata?.name ?? '', cmd: 'Abort', mode });
    } catch (err) {
      throw new TransientError('BackupAbortFailed', `failed to send Abort backup command: ${errorText(err)}`, { cause: err });
    }
    const wasAborting = p.status.conditions?.find((c) => c.type === COND.progressing)?.reason === REASON.aborting;
    setProgressing(p.status, REASON.aborting, 'Backup is aborting', p.nowIso);
    if (!wasAborting) await event(p.deps, b, mode === 'Pull' ? 'Normal' : 'Warning', EVENT.aborting, 'Backup is aborting');
  }
  if ((bs.volumes?.length ?? 0) > 0 && (p.status.includedVolumes?.length ?? 0) === 0) {
    p.status.includedVolumes = bs.volumes!.map((v) => ({ volumeName: v.volumeName }));
    if (bs.checkpointName !== undefined) p.status.checkpointName = bs.checkpointName;
  }
  setQuiesced(p.status, bs.quiesceStatus, p.nowIso);
}

async function completed(p: Pass, vmi: VirtualMachineInstance, bs: VirtualMachineInstanceBackupStatus, tracker: VirtualMachineBackupTracker | undefined): Promise<void> {
  const b = p.backup;
  const ns = b.metadata?.namespace ?? '';
  if (tracker && bs.checkpointName && bs.failed !== true) {
    const checkpoint = { name: bs.checkpointName, ...(bs.startTimestamp ? { creationTime: String(bs.startTimestamp) } : {}), ...(bs.volumes ? { volumes: bs.volumes.map((v) => ({ volumeName: v.volumeName })) } : {}) };
    // Repeated on every pass until cleanup is done; a checkpoint already recorded is not written again.
    if (!isDeepStrictEqual(tracker.status?.latestCheckpoint, checkpoint)) {
      await p.deps.kube.patch(VM_BACKUP_TRACKERS, ns, tracker.metadata?.name ?? '', trackerCheckpointPatch(tracker.status?.latestCheckpoint !== undefined, checkpoint), { subresource: 'status' });
    }
  }
  await detachOrPending(p, vmi);
  const outcome = outcomeOf(bs);
  if (outcome.kind === 'failed') await fail(p, REASON.failed, outcome.message);
  else if (outcome.kind === 'warning') {
    const text = `Completed VirtualMachineBackup, warning: ${outcome.message}`;
    setComplete(p.status, REASON.completedWithWarning, text, p.nowIso);
    await event(p.deps, b, 'Warning', EVENT.completedWithWarning, text);
  } else {
    setComplete(p.status, REASON.completed, 'Successfully completed VirtualMachineBackup', p.nowIso);
    await event(p.deps, b, 'Normal', EVENT.completed, 'Successfully completed VirtualMachineBackup');
  }
  if (tracker && bs.failed !== true && bs.checkpointName !== undefined) p.status.checkpointName = bs.checkpointName;
  // Rebuilt from virt-handler's list: any endpoints of a pull backup are dropped (quirk 10).
  p.status.includedVolumes = (bs.volumes ?? []).map((v) => ({ volumeName: v.volumeName }));
  setQuiesced(p.status, bs.quiesceStatus, p.nowIso);
  // The outcome is written BEFORE backupStatus (virt-handler's only record of it) is cleared: a
  // pass that dies between the two writes leaves a terminal backup whose leftover backupStatus the
  // next pass clears, instead of a Progressing backup whose status is gone ("VMI backup status was
  // lost", SourceLost: a completed backup reported failed; the chaos suite found it, seed 3 of the
  // backup scenario). KubeVirt clears first; a crash between the two is rare in one process.
  await writeStatus(p);
  await clearBackupStatus(p, vmi);
}

/**
 * The pull export goes, the target claim is detached (not done while the VMI still lists it),
 * then `backupStatus` is cleared. Throws "cleanup pending" until the detach is over.
 */
async function cleanupOrPending(p: Pass, vmi: VirtualMachineInstance): Promise<void> {
  await detachOrPending(p, vmi);
  await clearBackupStatus(p, vmi);
}

/** Removes the VMI's `backupStatus` when it is this backup's. */
async function clearBackupStatus(p: Pass, vmi: VirtualMachineInstance): Promise<void> {
  const name = p.backup.metadata?.name ?? '';
  if (vmi.status?.changedBlockTracking?.backupStatus?.backupName === name) await p.deps.kube.patch(VMIS, p.backup.metadata?.namespace ?? '', vmi.metadata?.name ?? '', removeBackupStatusPatch());
}

/** A terminal backup's `backupStatus` left on its VMI by a pass that died after writing the outcome. */
async function clearLeftBackupStatus(p: Pass): Promise<void> {
  const b = p.backup;
  const ns = b.metadata?.namespace ?? '';
  // Only a backup that completed through its VMI can have left one: a Complete one, or Failed with a type.
  if (!p.status.type) return;
  const source = b.spec.source.kind === KIND_TRACKER ? (await p.deps.kube.get(VM_BACKUP_TRACKERS, ns, b.spec.source.name))?.spec.source.name : b.spec.source.name;
  const vmi = source ? await p.deps.kube.get(VMIS, ns, source) : undefined;
  if (vmi) await clearBackupStatus(p, vmi);
}

/** The pull export goes, the target claim is detached; throws "cleanup pending" until the detach is over. */
async function detachOrPending(p: Pass, vmi: VirtualMachineInstance): Promise<void> {
  const b = p.backup;
  const ns = b.metadata?.namespace ?? '';
  const name = b.metadata?.name ?? '';
  const vmiName = vmi.metadata?.name ?? '';
  if (b.spec.mode === 'Pull' && (await p.deps.kube.get(VM_EXPORTS, ns, name))) await p.deps.kube.delete(VM_EXPORTS, ns, name);
  const volume = utilityVolumeNameOf(name);
  if (utilityVolumePresent(vmi, volume)) {
    const patch = removeUtilityVolumePatch(vmi, volume);
    if (patch) await p.deps.kube.patch(VMIS, ns, vmiName, patch);
    throw new TransientError('CleanupPending', CLEANUP_PENDING);
  }
}

async function fail(p: Pass, reason: string, message: string): Promise<void> {
  setFailed(p.status, reason, message, p.nowIso);
  await event(p.deps, p.backup, 'Warning', EVENT.failed, message);
}

/** Adds or removes the protection finalizer; the answer replaces the working copy. */
async function setFinalizer(p: Pass, want: boolean): Promise<void> {
  const patch: Patch | undefined = finalizerPatch(p.backup.metadata?.finalizers, BACKUP_FINALIZER, want);
  if (!patch) return;
  try {
    p.backup = await p.deps.kube.patch(VM_BACKUPS, p.backup.metadata?.namespace ?? '', p.backup.metadata?.name ?? '', patch);
  } catch (err) {
    if (!want && err instanceof NotFoundError) return;
    throw err;
  }
}

async function writeStatus(p: Pass): Promise<void> {
  p.backup = (await writeObjectStatus(p.deps.kube, VM_BACKUPS, p.backup, p.status)) ?? p.backup;
}

/** §4.5: the tracker's latest checkpoint redefined on the restarted VMI; a 422 clears it (the next backup is full). */
async function redefineCheckpoint(tracker: VirtualMachineBackupTracker, deps: BackupDeps): Promise<void> {
  const ns = tracker.metadata?.namespace ?? '';
  const name = tracker.metadata?.name ?? '';
  const vmName = tracker.spec.source.name;
  if (!(await deps.kube.get(VMIS, ns, vmName))) throw new TransientError('VmiNotFound', `VMI ${ns}/${vmName} not found`);
  const checkpoint = tracker.status!.latestCheckpoint!;
  try {
    await deps.virtApi.put('virtualmachineinstances', ns, vmName, 'redefine-checkpoint', checkpoint);
  } catch (err) {
    if (isWorkerCrash(err) || !isUnprocessable(err)) throw err;
    await event(deps, tracker, 'Warning', EVENT.checkpointRedefinitionFailed, `Failed to redefine checkpoint ${checkpoint.name}: ${errorText(err)}. Checkpoint cleared, next backup will be full.`, KIND_TRACKER);
    await deps.kube.patch(VM_BACKUP_TRACKERS, ns, name, redefinitionDonePatch(true), { subresource: 'status' });
    return;
  }
  await deps.kube.patch(VM_BACKUP_TRACKERS, ns, name, redefinitionDonePatch(false), { subresource: 'status' });
}

/** An HTTP 422 Unprocessable Entity from virt-api (KubeVirt matches the error text). */
function isUnprocessable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 422 || /422|Unprocessable Entity/.test(errorText(err));
}

/** Events about the backup or its tracker (best effort, shared/reconcile/events.ts). */
function event(deps: BackupDeps, obj: { metadata?: { namespace?: string; name?: string; uid?: string } }, type: 'Normal' | 'Warning', reason: string, text: string, kind: string = KIND_BACKUP): Promise<void> {
  return recordEvent(deps, objectRef(BACKUP_API_VERSION, kind, obj), type, reason, text, EVENT_COMPONENT.backup);
}
