/**
 * The snapshot reconcile against the sandbox API server (reference-snapshot-export-backup.md §1):
 * offline and online snapshots step by step, freeze and thaw through the guest agent (and its
 * absence), the lock, the 5 s retry and the failure deadline, deletion, a VolumeSnapshotClass
 * gone between two steps, a failed freeze, a missing source, and the VM's
 * volumeSnapshotStatuses. The CSI snapshotter is played by hand between passes.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { PVCS, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS, VOLUME_SNAPSHOT_CLASSES, VOLUME_SNAPSHOTS } from '../../../shared/api/resources.ts';
import type { VirtualMachine } from '../../../shared/api/snapshot.ts';
import { reconcileSnapshot, SUCCEEDED_METRIC } from '../../../functions/snapshot/reconcile.ts';
import { isPermanent } from '../../../shared/errors.ts';
import { volumeSnapshotProblems, type CheckedVm } from '../../../functions/clone/checks.ts';
import { actions, conditions, csiReady, harness, NS, pass, settle, snapshotOf, sourceVm, storage, VSC, type Harness } from './support.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startApiServer({ port: 0, tooLargeWaitMs: 50 });
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  h = harness(server);
  await storage(h);
  server.audit.clear();
});

const vmOf = async (name: string) => (await h.kube.get(VMS, NS, name)) as unknown as VirtualMachine | undefined;
const snap = (name: string) => h.kube.get(VM_SNAPSHOTS, NS, name);

describe('snapshot reconcile against the sandbox API server', () => {
  test('offline: finalizer and status first, then the lock (5 s retry), then content and VolumeSnapshot, then Succeeded and unlocked', async () => {
    // arrange
    await sourceVm(h, 'off-1');
    const s = await snapshotOf(h, 'snap-off-1', 'off-1');
    const key = `${NS}/snap-off-1`;
    const uid = s.metadata?.uid ?? '';
    // act
    const first = await pass(h, key);
    const afterFirst = await snap('snap-off-1');
    const second = await pass(h, key);
    const locked = await vmOf('off-1');
    const third = await pass(h, key);
    const vsBeforeReady = await h.kube.get(VOLUME_SNAPSHOTS, NS, `vmsnapshot-${uid}-volume-disk`);
    await csiReady(h);
    const settled = await settle(server, h, key);
    // assert: the first pass never locks (quirk 1)
    assert.deepEqual(afterFirst?.metadata?.finalizers, ['snapshot.kubevirt.io/vmsnapshot-protection']);
    assert.equal(afterFirst?.status?.phase, 'InProgress');
    assert.deepEqual(conditions(afterFirst), ['Progressing=False Source not locked', 'Ready=False Not ready']);
    assert.equal(typeof first !== 'string' && first.kind, 'requeue', 'woken at the failure deadline');
    // the lock: status then finalizer, retried after 5 s, no content yet
    assert.equal(locked?.status?.snapshotInProgress, 'snap-off-1');
    assert.ok(locked?.metadata?.finalizers?.includes('snapshot.kubevirt.io/snapshot-source-protection'));
    assert.deepEqual(typeof second !== 'string' && second.kind === 'requeue' && second.afterSeconds, 5);
    // the content, and one VolumeSnapshot per claim
    assert.equal(typeof third === 'string' ? third : 'ok', 'ok');
    assert.deepEqual(vsBeforeReady?.spec, { source: { persistentVolumeClaimName: 'off-1-disk' }, volumeSnapshotClassName: VSC });
    assert.deepEqual(vsBeforeReady?.metadata?.labels, { 'snapshot.kubevirt.io/source-vm-name': 'off-1', 'snapshot.kubevirt.io/source-vm-namespace': NS });
    const content = await h.kube.get(VM_SNAPSHOT_CONTENTS, NS, `vmsnapshot-content-${uid}`);
    assert.deepEqual(content?.metadata?.finalizers, ['snapshot.kubevirt.io/vmsnapshotcontent-protection']);
    assert.deepEqual(content?.spec?.volumeBackups?.map((b) => [b.volumeName, b.persistentVolumeClaim.metadata.name, b.volumeSnapshotName]), [['disk', 'off-1-disk', `vmsnapshot-${uid}-volume-disk`]]);
    assert.equal(content?.status?.readyToUse, true);
    assert.ok(content?.status?.creationTime);
    // Succeeded, ready, unlocked, no indications offline, the metric
    const done = await snap('snap-off-1');
    assert.equal(done?.status?.phase, 'Succeeded');
    assert.equal(done?.status?.readyToUse, true);
    assert.equal(done?.status?.sourceUID, (await vmOf('off-1'))?.metadata?.uid);
    assert.deepEqual(conditions(done), ['Progressing=False Operation complete', 'Ready=True Ready']);
    assert.equal(done?.status?.indications, undefined);
    assert.deepEqual(done?.status?.snapshotVolumes, { includedVolumes: ['disk'], excludedVolumes: ['root'] });
    const vm = await vmOf('off-1');
    assert.equal(vm?.status?.snapshotInProgress, undefined, 'unlocked');
    assert.ok(!vm?.metadata?.finalizers?.includes('snapshot.kubevirt.io/snapshot-source-protection'));
    assert.equal(h.virtApi.calls.length, 0, 'offline: no guest to freeze');
    assert.equal(h.metrics.value(SUCCEEDED_METRIC, { name: 'off-1', snapshot_name: 'snap-off-1', namespace: NS }), Math.floor(Date.parse(done?.status?.creationTime ?? '') / 1000), "whole seconds, as KubeVirt's Unix()");
    assert.ok(actions(server).includes('event SuccessfulVirtualMachineSnapshotContentCreate'));
    assert.ok(actions(server).includes('event SuccessfulVolumeSnapshotCreate'));
    assert.ok(settled.passes <= 4, `settled in ${settled.passes} passes: ${JSON.stringify(settled.outcomes)}`);
  });

  test('online with a guest agent: frozen before the VolumeSnapshot, thawed once it is cut; indications GuestAgent, Online; the spec from the start revision', async () => {
    // arrange
    await sourceVm(h, 'on-1', { online: true });
    await snapshotOf(h, 'snap-on-1', 'on-1');
    const key = `${NS}/snap-on-1`;
    // act
    await pass(h, key); // status
    await pass(h, key); // lock
    await pass(h, key); // content, freeze, VolumeSnapshot
    const frozen = (await h.kube.get(VMIS, NS, 'on-1'))?.status?.fsFreezeStatus;
    const inProgress = await snap('snap-on-1');
    await csiReady(h);
    await settle(server, h, key);
    // assert
    assert.equal(frozen, 'frozen');
    assert.deepEqual(inProgress?.status?.indications, ['GuestAgent', 'Online']);
    assert.deepEqual(inProgress?.status?.sourceIndications?.map((i) => i.indication), ['GuestAgent', 'Online']);
    assert.deepEqual(h.virtApi.calls, ['freeze on-1 {"unfreezeTimeout":"5m0s"}', 'unfreeze on-1']);
    assert.equal((await h.kube.get(VMIS, NS, 'on-1'))?.status?.fsFreezeStatus, undefined, 'thawed');
    const done = await snap('snap-on-1');
    assert.equal(done?.status?.phase, 'Succeeded');
    assert.deepEqual(done?.status?.indications, ['GuestAgent', 'Online'], 'kept once Succeeded');
    const content = await h.kube.get(VM_SNAPSHOT_CONTENTS, NS, done?.status?.virtualMachineSnapshotContentName ?? '');
    assert.equal(content?.spec?.source?.virtualMachine?.metadata?.name, 'on-1');
    assert.equal((content?.spec?.source?.virtualMachine?.spec as { runStrategy?: string } | undefined)?.runStrategy, 'Halted', 'the revision spec');
  });

  test('online without a guest agent: no freeze; indications NoGuestAgent, Online', async () => {
    // arrange
    await sourceVm(h, 'noagent-1', { online: true, agent: false });
    await snapshotOf(h, 'snap-noagent-1', 'noagent-1');
    // act
    await settle(server, h, `${NS}/snap-noagent-1`, () => csiReady(h));
    // assert
    const done = await snap('snap-noagent-1');
    assert.equal(done?.status?.phase, 'Succeeded');
    assert.deepEqual(done?.status?.indications, ['NoGuestAgent', 'Online']);
    assert.deepEqual(h.virtApi.calls, []);
  });

  test('failure deadline: a lock that never succeeds ends Failed with its conditions, the VM unlocked, no further requeue', async () => {
    // arrange: the claim never binds
    await sourceVm(h, 'late-1', { claimPhase: 'Pending' });
    await snapshotOf(h, 'snap-late-1', 'late-1', { failureDeadline: '1m0s' });
    const key = `${NS}/snap-late-1`;
    await pass(h, key);
    await pass(h, key);
    const waiting = await snap('snap-late-1');
    // act
    h.advance(61_000);
    const settled = await settle(server, h, key);
    // assert
    assert.deepEqual(conditions(waiting), ['Progressing=False Source not locked source default/late-1 volume not bound: late-1-disk', 'Ready=False Not ready']);
    const failed = await snap('snap-late-1');
    assert.equal(failed?.status?.phase, 'Failed');
    assert.deepEqual(conditions(failed), ['Progressing=False Operation failed', 'Ready=False Not ready', 'Failure=True snapshot deadline exceeded']);
    assert.deepEqual(settled.last, { kind: 'done' }, 'nothing retried once Failed');
    assert.equal((await vmOf('late-1'))?.status?.snapshotInProgress, undefined);
  });

  test('missing source: Progressing=False "Source does not exist", then Failed at the deadline', async () => {
    // arrange
    await snapshotOf(h, 'snap-ghost', 'no-such-vm', { failureDeadline: '30s' });
    const key = `${NS}/snap-ghost`;
    // act
    await settle(server, h, key);
    const waiting = await snap('snap-ghost');
    h.advance(31_000);
    const settled = await settle(server, h, key);
    // assert
    assert.deepEqual(conditions(waiting), ['Progressing=False Source does not exist', 'Ready=False Not ready']);
    assert.deepEqual(actions(server).filter((a) => a.startsWith('event')), ['event SourceDoesNotExist'], 'one Event, not one per pass');
    assert.equal((await snap('snap-ghost'))?.status?.phase, 'Failed');
    assert.deepEqual(settled.last, { kind: 'done' });
  });

  test('a failed freeze: the content reports the error, the snapshot is "In error state", retried after 5 s, and recovers', async () => {
    // arrange
    await sourceVm(h, 'frz-1', { online: true });
    await snapshotOf(h, 'snap-frz-1', 'frz-1');
    const key = `${NS}/snap-frz-1`;
    h.virtApi.failFreeze = 'Guest agent is not responding';
    await pass(h, key);
    await pass(h, key);
    // act
    const failed = await pass(h, key);
    await pass(h, key); // the snapshot copies the content's error
    const inError = await snap('snap-frz-1');
    h.virtApi.failFreeze = undefined;
    await settle(server, h, key, () => csiReady(h));
    // assert
    assert.deepEqual(typeof failed !== 'string' && failed.kind === 'requeue' && failed.afterSeconds, 5);
    assert.equal(inError?.status?.error?.message, 'Guest agent is not responding');
    assert.deepEqual(conditions(inError), ['Progressing=False In error state', 'Ready=False Not ready']);
    const done = await snap('snap-frz-1');
    assert.equal(done?.status?.phase, 'Succeeded');
    assert.equal(done?.status?.error, undefined, 'cleared');
  });

  test('a VolumeSnapshotClass gone between the content and its VolumeSnapshot: a retryable error with a condition, not a crash', async () => {
    // arrange: the content is made while the class exists
    await sourceVm(h, 'vsc-1');
    await snapshotOf(h, 'snap-vsc-1', 'vsc-1');
    const key = `${NS}/snap-vsc-1`;
    await pass(h, key);
    await pass(h, key);
    const realCreate = h.deps.kube.create.bind(h.deps.kube);
    // The class disappears right after the content is written, before the VolumeSnapshot.
    (h.deps.kube as { create: typeof realCreate }).create = async (res, obj) => {
      const out = await realCreate(res, obj);
      if (res === VM_SNAPSHOT_CONTENTS) await h.kube.delete(VOLUME_SNAPSHOT_CLASSES, undefined, VSC);
      return out;
    };
    // act
    const gone = await pass(h, key);
    (h.deps.kube as { create: typeof realCreate }).create = realCreate;
    await pass(h, key);
    const inError = await snap('snap-vsc-1');
    await storage(h);
    await settle(server, h, key, () => csiReady(h));
    // assert
    assert.deepEqual(typeof gone !== 'string' && gone.kind === 'requeue' && gone.afterSeconds, 5);
    assert.match(inError?.status?.error?.message ?? '', /^no VolumeSnapshotClass for storage class test-sc: cannot create VolumeSnapshot vmsnapshot-.*-volume-disk of default\/vsc-1-disk$/);
    assert.deepEqual(conditions(inError), ['Progressing=False In error state', 'Ready=False Not ready']);
    assert.equal((await snap('snap-vsc-1'))?.status?.phase, 'Succeeded', 'recovers once the class is back');
  });

  test('deletion: the content goes (Delete policy), the source is unlocked, then the finalizer', async () => {
    // arrange: a snapshot caught while locked, before its content is ready
    await sourceVm(h, 'del-1');
    await snapshotOf(h, 'snap-del-1', 'del-1');
    const key = `${NS}/snap-del-1`;
    await pass(h, key);
    await pass(h, key);
    await pass(h, key);
    const contentName = (await h.kube.list(VM_SNAPSHOT_CONTENTS, NS)).items.find((c) => c.spec?.virtualMachineSnapshotName === 'snap-del-1')?.metadata?.name ?? '';
    // act
    await h.kube.delete(VM_SNAPSHOTS, NS, 'snap-del-1');
    await settle(server, h, key);
    // assert
    assert.equal(await snap('snap-del-1'), undefined, 'the snapshot is gone');
    assert.equal(await h.kube.get(VM_SNAPSHOT_CONTENTS, NS, contentName), undefined, 'its content too');
    const vm = await vmOf('del-1');
    assert.equal(vm?.status?.snapshotInProgress, undefined);
    assert.ok(!vm?.metadata?.finalizers?.includes('snapshot.kubevirt.io/snapshot-source-protection'));
  });

  test('a source VM deleted before its lock: the refused finalizer (422, object being deleted) is retried, never dead-lettered (soak seed 61)', async () => {
    // arrange: a VM that another finalizer keeps while it is being deleted
    await sourceVm(h, 'gone-1');
    await h.kube.patch(VMS, NS, 'gone-1', { type: 'merge', body: { metadata: { finalizers: ['test.example/keep'] } } });
    await snapshotOf(h, 'snap-gone-1', 'gone-1');
    const key = `${NS}/snap-gone-1`;
    await pass(h, key); // the first pass never locks
    await h.kube.delete(VMS, NS, 'gone-1');
    // act
    const err = await reconcileSnapshot(key, h.deps).then(() => undefined, (e: unknown) => e);
    // assert: a transient error (retried with backoff, as KubeVirt's workqueue does), not bad input
    assert.ok(err instanceof Error, 'the pass fails');
    assert.equal(isPermanent(err), false, `not permanent: ${String(err)}`);
    assert.match((err as Error).message, /being deleted/);
    await h.kube.patch(VMS, NS, 'gone-1', { type: 'merge', body: { metadata: { finalizers: null } } });
  });

  test('a source of another kind is bad input, not retried', async () => {
    // arrange
    await h.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: 'snap-pod', namespace: NS }, spec: { source: { kind: 'Pod', name: 'p' } } });
    // act
    const out = await pass(h, `${NS}/snap-pod`);
    // assert
    assert.equal(out, 'spec.source: unknown source {APIGroup:<nil> Kind:Pod Name:p}');
  });

  test('the VM key: status.volumeSnapshotStatuses per volume, rewritten when the class goes', async () => {
    // arrange
    await sourceVm(h, 'vss-1');
    // act
    await pass(h, `${NS}/vss-1`);
    const withClass = (await vmOf('vss-1'))?.status?.volumeSnapshotStatuses;
    await h.kube.delete(VOLUME_SNAPSHOT_CLASSES, undefined, VSC);
    await pass(h, `${NS}/vss-1`);
    const without = (await vmOf('vss-1'))?.status?.volumeSnapshotStatuses;
    server.audit.clear();
    await pass(h, `${NS}/vss-1`);
    // assert
    assert.deepEqual(withClass, [
      { name: 'root', enabled: false, reason: 'Snapshot is not supported for this volumeSource type [root]' },
      { name: 'disk', enabled: true },
    ]);
    assert.deepEqual(without?.[1], { name: 'disk', enabled: false, reason: 'No VolumeSnapshotClass: Volume snapshots are not configured for this StorageClass [test-sc] [disk]' }, 'named, as KubeVirt names every entry');
    assert.deepEqual(actions(server), [], 'unchanged: not written again');
  });

  test('the VM key: a claim that is not there is named too ("PVC not found"), so a clone of the VM is told the volume does not support snapshots', async () => {
    // arrange: the VM's disk claim deleted
    await sourceVm(h, 'vss-2');
    await h.kube.delete(PVCS, NS, 'vss-2-disk');
    // act
    await pass(h, `${NS}/vss-2`);
    // assert
    const vm = await vmOf('vss-2');
    assert.deepEqual(vm?.status?.volumeSnapshotStatuses?.[1], { name: 'disk', enabled: false, reason: 'PVC not found' });
    assert.deepEqual(volumeSnapshotProblems(vm as CheckedVm), ['Virtual Machine volume disk does not support snapshots'], 'not "snapshot support unknown" for ever');
  });
});
