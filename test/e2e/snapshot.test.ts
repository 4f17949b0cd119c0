/**
 * The snapshot controller end to end: sandbox cluster with its storage side (provisioner, CSI
 * snapshotter, virt-api with the guest agent) ← relay → SQLite queue → snapshot, VM and VMI
 * functions (LocalRuntime). What the test does is what a user does: make a VM on a claim, start
 * it or not, and create VirtualMachineSnapshots.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readOnly } from '../../ops/cluster-reader.ts';
import { diagnose, DIAGNOSABLE } from '../../ops/diagnose/diagnose.ts';
import { parseTarget } from '../../ops/target.ts';
import { NO_GUEST_AGENT_ANNOTATION } from '../../sandbox/nodes/guest-agent.ts';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { VirtualMachine } from '../../shared/api/index.ts';
import { EVENTS, PVCS, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { VirtualMachineSnapshot } from '../../shared/api/snapshot.ts';
import { SUCCEEDED_METRIC } from '../../functions/snapshot/reconcile.ts';
import { NS, queueIdle, startSlice, until, vmManifest, type Slice } from './support.ts';

let s: Slice;

before(async () => {
  s = await startSlice({ storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 } });
});
after(async () => {
  await s?.stop();
});

/** A VM with a containerDisk and a data disk on claim `<name>-data` of `storageClass`. */
async function vmWithClaim(name: string, runStrategy: string, opts: { storageClass?: string; agent?: boolean } = {}): Promise<VirtualMachine> {
  await s.kube.create(PVCS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `${name}-data`, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: opts.storageClass ?? IMMEDIATE_CLASS },
  });
  const vm = vmManifest(name, { runStrategy } as Partial<VirtualMachine['spec']>);
  const tmpl = vm.spec.template;
  if (opts.agent === false) tmpl.metadata = { ...tmpl.metadata, annotations: { [NO_GUEST_AGENT_ANNOTATION]: 'true' } };
  tmpl.spec!.domain.devices.disks = [...(tmpl.spec!.domain.devices.disks ?? []), { name: 'data', disk: { bus: 'virtio' } }];
  tmpl.spec!.volumes = [...(tmpl.spec!.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }];
  return s.kube.create(VMS, vm);
}

async function snapshotOf(name: string, vm: string, failureDeadline?: string): Promise<void> {
  await s.kube.create(VM_SNAPSHOTS, {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshot',
    metadata: { name, namespace: NS },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm }, ...(failureDeadline ? { failureDeadline } : {}) },
  });
}

const snap = (name: string) => s.kube.get(VM_SNAPSHOTS, NS, name);
/** `virt-reconciler diagnose snapshot/…`, in process. */
const diagnoseSnapshot = (name: string) => diagnose(parseTarget(`snapshot/${NS}/${name}`, DIAGNOSABLE), { cluster: readOnly(s.kube), queue: s.rt.queue, state: s.rt.state, now: Date.now() });
const conditions = (x: VirtualMachineSnapshot | undefined) => (x?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}`);

async function running(vm: string): Promise<boolean> {
  const vmi = await s.kube.get(VMIS, NS, vm);
  return vmi?.status?.phase === 'Running' && (vmi.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

async function phaseOf(name: string, phase: string): Promise<boolean> {
  return (await snap(name))?.status?.phase === phase;
}

/** The source VM's lock is gone (status and finalizer). */
async function unlocked(vm: string): Promise<boolean> {
  const v = await s.kube.get(VMS, NS, vm);
  return v?.status?.snapshotInProgress === undefined && !(v?.metadata?.finalizers ?? []).includes('snapshot.kubevirt.io/snapshot-source-protection');
}

describe('snapshot end to end', () => {
  test('online, with the guest agent: frozen then thawed; Succeeded and ready with indications GuestAgent, Online', async () => {
    // arrange
    await vmWithClaim('snap-on', 'Always');
    await until('the VM runs', () => running('snap-on'), { problems: s.problems });
    // act
    await snapshotOf('on-1', 'snap-on');
    await until('the snapshot is ready', async () => (await snap('on-1'))?.status?.readyToUse === true, { problems: s.problems });
    await until('the source is unlocked', () => unlocked('snap-on'), { problems: s.problems });
    // assert
    const done = await snap('on-1');
    assert.equal(done?.status?.phase, 'Succeeded');
    assert.deepEqual(done?.status?.indications, ['GuestAgent', 'Online']);
    assert.deepEqual(conditions(done), ['Progressing=False Operation complete', 'Ready=True Ready']);
    const calls = s.sandbox.storage!.virtApi.calls().filter((c) => c.includes('/snap-on/'));
    assert.deepEqual(calls, [`PUT ${NS}/snap-on/freeze`, `PUT ${NS}/snap-on/unfreeze`], 'frozen once, thawed once');
    assert.equal((await s.kube.get(VMIS, NS, 'snap-on'))?.status?.fsFreezeStatus, undefined, 'thawed');
    const content = await s.kube.get(VM_SNAPSHOT_CONTENTS, NS, done?.status?.virtualMachineSnapshotContentName ?? '');
    assert.deepEqual(content?.spec?.volumeBackups?.map((b) => b.volumeName), ['data']);
    assert.deepEqual(done?.status?.snapshotVolumes, { includedVolumes: ['data'], excludedVolumes: ['containerdisk'] });
    assert.ok(s.rt.metrics.value(SUCCEEDED_METRIC, { name: 'snap-on', snapshot_name: 'on-1', namespace: NS }) > 0, 'the succeeded timestamp metric');
    const vm = await s.kube.get(VMS, NS, 'snap-on');
    assert.deepEqual(vm?.status?.volumeSnapshotStatuses, [{ name: 'containerdisk', enabled: false, reason: 'Snapshot is not supported for this volumeSource type [containerdisk]' }, { name: 'data', enabled: true }]);
  });

  test('online without a guest agent: no freeze; indications NoGuestAgent, Online', async () => {
    // arrange
    await vmWithClaim('snap-noagent', 'Always', { agent: false });
    await until('the VM runs', () => running('snap-noagent'), { problems: s.problems });
    // act
    await snapshotOf('noagent-1', 'snap-noagent');
    await until('the snapshot is ready', async () => (await snap('noagent-1'))?.status?.readyToUse === true, { problems: s.problems });
    // assert
    assert.deepEqual((await snap('noagent-1'))?.status?.indications, ['NoGuestAgent', 'Online']);
    assert.deepEqual(s.sandbox.storage!.virtApi.calls().filter((c) => c.includes('/snap-noagent/')), []);
  });

  test('offline: Succeeded and ready, no indications, the VM unlocked', async () => {
    // arrange
    await vmWithClaim('snap-off', 'Halted');
    await until('the claim is bound', async () => (await s.kube.get(PVCS, NS, 'snap-off-data'))?.status?.phase === 'Bound');
    // act
    await snapshotOf('off-1', 'snap-off');
    await until('the snapshot is ready', async () => (await snap('off-1'))?.status?.readyToUse === true, { problems: s.problems });
    await until('the source is unlocked', () => unlocked('snap-off'), { problems: s.problems });
    // assert
    const done = await snap('off-1');
    assert.equal(done?.status?.phase, 'Succeeded');
    assert.equal(done?.status?.indications, undefined);
    assert.equal(await s.kube.get(VMIS, NS, 'snap-off'), undefined, 'still stopped');
  });

  test('a snapshot that misses its failure deadline ends Failed with its condition, and is not retried', async () => {
    // arrange: a claim of a class nobody provisions never binds, so the lock never succeeds
    await vmWithClaim('snap-late', 'Halted', { storageClass: 'nobody-provisions-this' });
    // act
    await snapshotOf('late-1', 'snap-late', '3s');
    await until('the snapshot failed', () => phaseOf('late-1', 'Failed'), { problems: s.problems });
    await until('the queue is idle', () => queueIdle(s, ['snapshot']));
    // assert
    assert.deepEqual(conditions(await snap('late-1')), ['Progressing=False Operation failed', 'Ready=False Not ready', 'Failure=True snapshot deadline exceeded']);
    const depth = await s.rt.queue.depth('snapshot');
    assert.equal(depth.visible + depth.inFlight, 0, 'nothing left to retry');
    assert.ok(await unlocked('snap-late'));
    // and the operator's tool names it
    const d = await diagnoseSnapshot('late-1');
    assert.match(d.verdict, /^snapshot Failed: snapshot deadline exceeded/);
  });

  test('a snapshot of a VM that does not exist: a clear condition and one Event, then Failed at its deadline', async () => {
    // act
    await snapshotOf('ghost-1', 'no-such-vm', '3s');
    await until('the condition says so', async () => conditions(await snap('ghost-1')).includes('Progressing=False Source does not exist'), { problems: s.problems });
    const d = await diagnoseSnapshot('ghost-1');
    const events = await s.kube.list(EVENTS, NS, { fieldSelector: 'involvedObject.name=ghost-1' });
    await until('the snapshot failed', () => phaseOf('ghost-1', 'Failed'), { problems: s.problems });
    // assert
    assert.deepEqual((events.items as { reason?: string; type?: string; message?: string }[]).map((e) => `${e.type} ${e.reason} ${e.message}`), [`Warning SourceDoesNotExist Source VirtualMachine ${NS}/no-such-vm does not exist`]);
    assert.ok(conditions(await snap('ghost-1')).includes('Failure=True snapshot deadline exceeded'));
    // diagnose named the cause while it was in progress (or, had the 3 s deadline passed first, the failure)
    assert.match(d.verdict, new RegExp(`^(snapshot not ready: its source VirtualMachine ${NS}/no-such-vm does not exist|snapshot Failed: snapshot deadline exceeded)`));
  });
});
