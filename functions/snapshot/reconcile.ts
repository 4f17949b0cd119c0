/**
 * KubeVirt's snapshot controller as one stateless reconcile of a key `namespace/name`, which
 * names both a VirtualMachineSnapshot and a VirtualMachine (KubeVirt's separate snapshot, content
 * and VM-status queues fold into one: the relay maps content, VolumeSnapshot and VMI events to
 * the snapshot's key, VM, PVC, DataVolume and VolumeSnapshotClass events to the VM's):
 *
 * 1. the snapshot (reference §1.2): its finalizer → lock the source (the first pass never does),
 *    or create the content once locked → delete the content of a terminating snapshot → status →
 *    let the finalizer go once unlocked;
 * 2. its content (§1.5): VolumeSnapshots (freeze first), creationTime and thaw, status — or,
 *    with no snapshot of that name, the contents left naming it;
 * 3. the VM of that name: `status.volumeSnapshotStatuses` (§1.8).
 *
 * The fixed 5 s retry after a lock attempt, a failed freeze or a content being deleted, else a
 * wake-up at the failure deadline.
 */
import { VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachine, VirtualMachineSnapshot, VirtualMachineSnapshotContent } from '../../shared/api/snapshot.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { addFinalizerOps, removeFinalizerOps } from '../../shared/kube/finalizer-ops.ts';
import { splitKey } from '../../shared/queue/message.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext } from '../../shared/reconcile/outcome.ts';
import { isDeepStrictEqual } from 'node:util';
import { createContent, syncContent } from './content.ts';
import { isProgressing, isTerminating, shouldDeleteContent, timeUntilDeadlineMs } from './deadline.ts';
import type { SnapshotDeps } from './deps.ts';
import { snapshotEvent } from './events.ts';
import { contentNameFor, SNAPSHOT_FINALIZER, SNAPSHOT_RETRY_SECONDS } from './names.ts';
import { computeSnapshotStatus } from './snapshot-status.ts';
import { lock, sourceOfSnapshot, unlock } from './source.ts';
import { SNAPSHOT } from '../../shared/metrics/kubevirt/catalog.ts';
import { setMetric } from '../../shared/metrics/kubevirt/record.ts';
import { lockMessage } from './source-state.ts';
import { storageLookup, type StorageLookup } from './storage-lookup.ts';
import { syncVolumeSnapshotStatuses } from './vm-status.ts';

export const SUCCEEDED_METRIC = SNAPSHOT.succeededTimestamp.name;

/** Reconciles the snapshot and the VM named by `key` (`namespace/name`). */
export async function reconcileSnapshot(key: string, deps: SnapshotDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const { namespace, name } = splitKey(key);
  const rv = ctx.minResourceVersion;
  const lookup = storageLookup(deps.kube, namespace);
  const waits: (number | undefined)[] = [];

  // 1–2. the snapshot and its content, or the contents a deleted snapshot left
  const snapshot = await deps.kube.get(VM_SNAPSHOTS, namespace, name, { resourceVersion: rv });
  if (snapshot) {
    const after = await syncSnapshot(snapshot, lookup, deps, rv);
    waits.push(after.wait);
    const content = after.snapshot ? await deps.kube.get(VM_SNAPSHOT_CONTENTS, namespace, contentNameOf(after.snapshot)) : undefined;
    // A fresh lookup: in KubeVirt the content is another work item, with its own view of the classes.
    if (content) waits.push(await syncContent(content, after.snapshot, storageLookup(deps.kube, namespace), deps));
  } else {
    for (const content of await contentsNaming(namespace, name, deps)) waits.push(await syncContent(content, undefined, lookup, deps));
  }

  // 3. the VM of the same name
  const vm = await deps.kube.get(VMS, namespace, name, { resourceVersion: rv });
  if (vm) await syncVolumeSnapshotStatuses(vm as unknown as VirtualMachine, lookup, deps);

  const wait = Math.min(...waits.filter((w): w is number => w !== undefined && w > 0));
  return Number.isFinite(wait) ? requeueAfter(Math.max(0.05, wait / (deps.clockSpeed ?? 1)), 'snapshot retry or failure deadline') : done;
}

const SOURCE_MISSING = 'Source does not exist';
const progressingReason = (st: VirtualMachineSnapshot['status']) => st?.conditions?.find((c) => c.type === 'Progressing')?.reason;

const contentNameOf = (s: VirtualMachineSnapshot) => s.status?.virtualMachineSnapshotContentName || contentNameFor(s.metadata?.uid ?? '');

/** Contents whose snapshot is `snapshotName` (their snapshot is gone: they still need letting go). */
async function contentsNaming(namespace: string, snapshotName: string, deps: SnapshotDeps): Promise<VirtualMachineSnapshotContent[]> {
  const all = await deps.kube.list(VM_SNAPSHOT_CONTENTS, namespace);
  return all.items.filter((c) => c.spec?.virtualMachineSnapshotName === snapshotName);
}

/** One pass of §1.2: the snapshot as written (undefined once gone) and how long to wait. */
async function syncSnapshot(found: VirtualMachineSnapshot, lookup: StorageLookup, deps: SnapshotDeps, rv: string | undefined): Promise<{ snapshot?: VirtualMachineSnapshot; wait?: number }> {
  let snapshot = found;
  const ns = snapshot.metadata?.namespace ?? '';
  const name = snapshot.metadata?.name ?? '';
  const nowMs = deps.now();
  const src = await sourceOfSnapshot(snapshot, deps, rv);
  let content = await deps.kube.get(VM_SNAPSHOT_CONTENTS, ns, contentNameOf(snapshot), { resourceVersion: rv });
  const terminating = isTerminating(snapshot, nowMs);

  // the snapshot's finalizer, while it is not going
  if (!terminating) {
    const written = await patchSnapshot(snapshot, addFinalizerOps(snapshot, SNAPSHOT_FINALIZER), deps);
    if (!written) return {};
    snapshot = written;
  }

  // lock, or create the content once locked; unlock when done or going (the first pass has no status: no lock yet)
  let retry: number | undefined;
  let mayRemoveFinalizer = src === undefined;
  let lockText = lockMessage(src?.state.locked ?? false);
  if (snapshot.status && src) {
    if (isProgressing(snapshot) && !terminating) {
      if (!src.state.locked) {
        lockText = (await lock(src, name, lookup, deps)).message;
        retry = SNAPSHOT_RETRY_SECONDS;
      } else if (!content) {
        await createContent(snapshot, src, lookup, deps);
      }
    } else {
      // The source stays locked until a content that must go has gone (quirk 4).
      if (!isProgressing(snapshot) || (terminating && (!content || !shouldDeleteContent(snapshot, content)))) await unlock(src, name, deps);
      mayRemoveFinalizer = !src.state.locked;
      lockText = lockMessage(src.state.locked);
    }
  } else if (!snapshot.status) {
    mayRemoveFinalizer = false;
  }

  // a terminating snapshot's content goes unless Retain keeps a ready one
  if (terminating && content && shouldDeleteContent(snapshot, content)) {
    await deps.kube.delete(VM_SNAPSHOT_CONTENTS, ns, content.metadata?.name ?? '');
    content = await deps.kube.get(VM_SNAPSHOT_CONTENTS, ns, content.metadata?.name ?? '');
  }

  // status
  const status = computeSnapshotStatus(snapshot, { source: src?.vm, state: src?.state, lockMessage: lockText, content, nowMs, nowIso: new Date(nowMs).toISOString() });
  if (!isDeepStrictEqual(status, snapshot.status)) {
    try {
      snapshot = await deps.kube.update(VM_SNAPSHOTS, { ...snapshot, status }, { subresource: 'status' });
    } catch (err) {
      if (err instanceof NotFoundError) return {};
      throw err;
    }
  }
  if (progressingReason(status) === SOURCE_MISSING && progressingReason(found.status) !== SOURCE_MISSING) {
    // Not in KubeVirt (its condition alone says it): one Event when the source goes missing.
    await snapshotEvent(deps, 'VirtualMachineSnapshot', snapshot, 'Warning', 'SourceDoesNotExist', `Source VirtualMachine ${ns}/${snapshot.spec?.source?.name ?? ''} does not exist`);
  }
  if (status.phase === 'Succeeded' && status.creationTime) {
    if (deps.metrics) setMetric(deps.metrics, SNAPSHOT.succeededTimestamp, { name: snapshot.spec?.source?.name ?? '', snapshot_name: name, namespace: ns }, Math.floor(Date.parse(status.creationTime) / 1000));
  }

  // a deleted snapshot lets go once its source is unlocked
  if (snapshot.metadata?.deletionTimestamp && mayRemoveFinalizer) {
    const written = await patchSnapshot(snapshot, removeFinalizerOps(snapshot, SNAPSHOT_FINALIZER), deps);
    if (!written) return {};
    snapshot = written;
  }
  if (retry !== undefined) return { snapshot, wait: retry };
  const untilDeadline = timeUntilDeadlineMs(snapshot, deps.now());
  return { snapshot, ...(untilDeadline > 0 ? { wait: untilDeadline / 1000 } : {}) };
}

/** A JSON patch of the snapshot's metadata; undefined once it is gone. No ops, no request. */
async function patchSnapshot(snapshot: VirtualMachineSnapshot, ops: ReturnType<typeof addFinalizerOps>, deps: SnapshotDeps): Promise<VirtualMachineSnapshot | undefined> {
  if (ops.length === 0) return snapshot;
  try {
    return await deps.kube.patch(VM_SNAPSHOTS, snapshot.metadata?.namespace ?? '', snapshot.metadata?.name ?? '', { type: 'json', ops });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}
