/**
 * The VirtualMachineSnapshotContent: created once the source is locked (reference §1.4), then
 * reconciled (§1.5) — one VolumeSnapshot per volume backup (the guest frozen first, once per
 * pass), its status aggregated from theirs, `creationTime` set and the guest thawed once every
 * VolumeSnapshot is cut. Pure rules are render-content.ts and content-status.ts.
 *
 * A VolumeSnapshotClass that has gone between the content's creation and a VolumeSnapshot's
 * (KubeVirt dereferences nil there, quirk 12), an ambiguous class, or a claim without a storage
 * class are reported like a failed freeze: `status.error` on the content (so the snapshot shows
 * `Progressing=False "In error state"`), `readyToUse=false`, and a retry after 5 s, until the
 * class is back or the snapshot's failure deadline ends it.
 */
import { CONTROLLER_REVISIONS, VM_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS } from '../../shared/api/resources.ts';
import type { VirtualMachineSnapshot, VirtualMachineSnapshotContent, VmSpec, VolumeBackup, VolumeSnapshot } from '../../shared/api/snapshot.ts';
import { errorText, InvalidInputError, TransientError } from '../../shared/errors.ts';
import { AlreadyExistsError, NotFoundError } from '../../shared/kube/errors.ts';
import { removeFinalizerOps } from '../../shared/kube/finalizer-ops.ts';
import { copyRevisions } from '../../shared/instancetype/revision-copy.ts';
import { aggregate, nextContentStatus } from './content-status.ts';
import { isTerminating, shouldDeleteContent } from './deadline.ts';
import type { SnapshotDeps } from './deps.ts';
import { SNAPSHOT_API_VERSION, snapshotEvent } from './events.ts';
import { CONTENT_FINALIZER, SNAPSHOT_RETRY_SECONDS, SOURCE_VM_NAME_LABEL, SOURCE_VM_NAMESPACE_LABEL } from './names.ts';
import { renderContent, sourceSpecFor, volumeBackupsFor } from './render-content.ts';
import { freeze, readSource, unfreeze, type Source } from './source.ts';
import type { StorageLookup } from './storage-lookup.ts';
import { absentIsEmpty, writeStatus as writeObjectStatus } from '../../shared/reconcile/write-status.ts';

type ContentStatus = NonNullable<VirtualMachineSnapshotContent['status']>;

/** Creates the content of a locked source (AlreadyExists is fine; the event is emitted either way, as upstream). */
export async function createContent(snapshot: VirtualMachineSnapshot, src: Source, lookup: StorageLookup, deps: SnapshotDeps): Promise<void> {
  const { claims, pvcs } = await lookup.claimsOf(src.vm);
  const classed = new Set<string>();
  for (const [claim, pvc] of pvcs) {
    const sc = pvc.spec?.storageClassName;
    if (!sc) continue;
    const choice = await lookup.classFor(sc);
    if ('error' in choice) throw new TransientError('VolumeSnapshotClassAmbiguous', choice.error);
    if (choice.name !== '') classed.add(claim);
  }
  const backups = volumeBackupsFor(snapshot.metadata?.uid ?? '', claims, pvcs, (p) => classed.has(p.metadata?.name ?? ''));
  // The instance type and preference revisions the VM names are copied for the snapshot (owned
  // by it), and the content names the copies (§1.4): a restore needs them after the VM is gone.
  const ns = snapshot.metadata?.namespace ?? '';
  const owner = { apiVersion: SNAPSHOT_API_VERSION, kind: 'VirtualMachineSnapshot', name: snapshot.metadata?.name ?? '', uid: snapshot.metadata?.uid ?? '' };
  const spec = await copyRevisions(deps.kube, ns, sourceSpecFor(src.vm, await runningSpec(src, deps)), { from: src.vm.metadata?.name ?? '', to: owner.name }, owner);
  const content = renderContent(snapshot, src.vm, spec, backups);
  try {
    await deps.kube.create(VM_SNAPSHOT_CONTENTS, content);
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
  await snapshotEvent(deps, 'VirtualMachineSnapshot', snapshot, 'Normal', 'SuccessfulVirtualMachineSnapshotContentCreate', `Successfully created VirtualMachineSnapshotContent ${content.metadata?.name ?? ''}`);
}

/** Online: the spec in the revision the VMI was started from (the VM controller's start revision). */
async function runningSpec(src: Source, deps: SnapshotDeps): Promise<VmSpec | undefined> {
  if (!src.vmi) return undefined;
  const name = src.vmi.status?.virtualMachineRevisionName ?? '';
  const rev = name ? await deps.kube.get(CONTROLLER_REVISIONS, src.vm.metadata?.namespace ?? '', name) : undefined;
  const spec = (rev?.data as { spec?: VmSpec } | undefined)?.spec;
  if (!spec) throw new TransientError('RevisionMissing', `vm revision ${name} doesn't exist`);
  return spec;
}

/** Why a VolumeSnapshot could not be asked for (reported in `status.error`, retried). */
class VolumeSnapshotRefused extends Error {}

/** The VolumeSnapshot of one volume backup (§1.5 step 4), created (AlreadyExists → the existing one). */
async function createVolumeSnapshot(content: VirtualMachineSnapshotContent, backup: VolumeBackup, lookup: StorageLookup, deps: SnapshotDeps): Promise<VolumeSnapshot> {
  const ns = content.metadata?.namespace ?? '';
  const name = backup.volumeSnapshotName ?? '';
  const pvcName = backup.persistentVolumeClaim.metadata?.name ?? '';
  const sc = backup.persistentVolumeClaim.spec?.storageClassName as string | undefined;
  if (!sc) throw new VolumeSnapshotRefused(`${ns}/${pvcName} VolumeSnapshot requested but no storage class`);
  const choice = await lookup.classFor(sc);
  if ('error' in choice) throw new VolumeSnapshotRefused(choice.error);
  if (choice.name === '') throw new VolumeSnapshotRefused(`no VolumeSnapshotClass for storage class ${sc}: cannot create VolumeSnapshot ${name} of ${ns}/${pvcName}`);
  const vmMeta = content.spec?.source?.virtualMachine?.metadata;
  const vs: VolumeSnapshot = {
    metadata: {
      name,
      namespace: ns,
      labels: { [SOURCE_VM_NAME_LABEL]: vmMeta?.name ?? '', [SOURCE_VM_NAMESPACE_LABEL]: vmMeta?.namespace ?? ns },
      ownerReferences: [{ apiVersion: SNAPSHOT_API_VERSION, kind: 'VirtualMachineSnapshotContent', name: content.metadata?.name ?? '', uid: content.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: { source: { persistentVolumeClaimName: pvcName }, volumeSnapshotClassName: choice.name },
  };
  try {
    const created = await deps.kube.create(VOLUME_SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', ...vs } as VolumeSnapshot);
    await snapshotEvent(deps, 'VirtualMachineSnapshotContent', content, 'Normal', 'SuccessfulVolumeSnapshotCreate', `Successfully created VolumeSnapshot ${name}`);
    return created;
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    const existing = await deps.kube.get(VOLUME_SNAPSHOTS, ns, name);
    if (!existing) throw new TransientError('Conflict', `VolumeSnapshot ${ns}/${name} exists and is gone again`);
    return existing;
  }
}

async function writeStatus(content: VirtualMachineSnapshotContent, status: ContentStatus, deps: SnapshotDeps): Promise<VirtualMachineSnapshotContent> {
  return (await writeObjectStatus(deps.kube, VM_SNAPSHOT_CONTENTS, content, status, { equal: absentIsEmpty })) ?? content;
}

/** The content with `status.error` set and not ready: a failed freeze, or a VolumeSnapshot that could not be asked for. */
async function failPass(content: VirtualMachineSnapshotContent, message: string, deps: SnapshotDeps): Promise<number> {
  const status: ContentStatus = { ...structuredClone(content.status ?? {}), error: { time: new Date(deps.now()).toISOString(), message }, readyToUse: false };
  await writeStatus(content, status, deps);
  return SNAPSHOT_RETRY_SECONDS;
}

/**
 * One pass over a content (§1.5). `snapshot` is the VMSnapshot it names, if it exists. Answers
 * the seconds to wait before the next pass, if any.
 */
export async function syncContent(found: VirtualMachineSnapshotContent, snapshot: VirtualMachineSnapshot | undefined, lookup: StorageLookup, deps: SnapshotDeps): Promise<number | undefined> {
  let content = found;
  const ns = content.metadata?.namespace ?? '';
  const snapshotName = content.spec?.virtualMachineSnapshotName;
  if (!snapshotName) throw new InvalidInputError('spec.virtualMachineSnapshotName', 'VirtualMachineSnapshotName is not initialized in vm snapshot content', 'InvalidContent');
  const vmName = content.spec?.source?.virtualMachine?.metadata?.name ?? '';
  let src: Source | undefined;
  const source = async () => (src ??= await readSource(ns, vmName, snapshotName, deps));

  // The snapshot is gone or going: thaw, let the content go (the snapshot side deletes it if it must).
  if (!snapshot || isTerminating(snapshot, deps.now())) {
    try {
      await unfreeze(await source(), deps);
    } catch (err) {
      deps.log.warn('unfreeze failed', { content: content.metadata?.name, error: errorText(err) });
    }
    const ops = removeFinalizerOps(content, CONTENT_FINALIZER);
    if (ops.length > 0) {
      try {
        content = await deps.kube.patch(VM_SNAPSHOT_CONTENTS, ns, content.metadata?.name ?? '', { type: 'json', ops });
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
    }
    if (snapshot && shouldDeleteContent(snapshot, content)) return undefined;
  }
  if (content.metadata?.deletionTimestamp) return SNAPSHOT_RETRY_SECONDS;

  const vss: VolumeSnapshot[] = [];
  const deleted: string[] = [];
  const skipped: string[] = [];
  let froze = false;
  for (const backup of content.spec?.volumeBackups ?? []) {
    const name = backup.volumeSnapshotName;
    if (!name) continue;
    let vs = await deps.kube.get(VOLUME_SNAPSHOTS, ns, name);
    if (!vs) {
      if (content.status?.creationTime) {
        await snapshotEvent(deps, 'VirtualMachineSnapshotContent', content, 'Warning', 'VolumeSnapshotMissing', `VolumeSnapshot ${name} no longer exists`);
        deleted.push(name);
        continue;
      }
      if (!snapshot || snapshot.metadata?.deletionTimestamp) {
        skipped.push(name);
        continue;
      }
      if (!froze) {
        const s = await source();
        if (!s) throw new TransientError('SourceMissing', 'unable to get snapshot source');
        try {
          await freeze(s, snapshot, deps);
        } catch (err) {
          return failPass(content, errorText(err), deps);
        }
        froze = true;
      }
      try {
        vs = await createVolumeSnapshot(content, backup, lookup, deps);
      } catch (err) {
        if (err instanceof VolumeSnapshotRefused) return failPass(content, err.message, deps);
        throw err;
      }
    }
    vss.push(vs);
  }

  const agg = aggregate(vss, deleted, skipped);
  const nowIso = new Date(deps.now()).toISOString();
  const st: ContentStatus = structuredClone(content.status ?? {});
  if (agg.created && !st.creationTime) {
    st.creationTime = nowIso;
    try {
      await unfreeze(await source(), deps);
    } catch (err) {
      const message = errorText(err);
      // Windows VSS: the freeze window was shorter than the snapshot took; report it and retry.
      if (!message.includes('fsfreeze is limited')) throw err;
      const { creationTime: _cut, ...rest } = st;
      await writeStatus(content, { ...rest, error: { time: nowIso, message } }, deps);
      return SNAPSHOT_RETRY_SECONDS;
    }
  }
  await writeStatus(content, nextContentStatus({ ...content, status: st }, agg, nowIso), deps);
  return undefined;
}
