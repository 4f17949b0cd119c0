/**
 * The restore reconcile against the sandbox API server (reference-snapshot-export-backup.md §2):
 * into the stopped source VM step by step (first status alone, owner and finalizer, the VM's
 * restoreInProgress, the restore claim from the VolumeSnapshot, waiting for it to bind, the VM
 * spec, release, complete), InPlace, into a new VM (claims handed over), the readiness policies
 * with a running target, the snapshot checks, a target of another VM, a restore already in
 * progress, deletion, and frozen complete/failed restores. The PV binder is played by hand.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { EVENTS, PVCS, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS } from '../../../shared/api/resources.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import { legacyFirmwareUuid } from '../../../shared/api/firmware-uuid.ts';
import { actions, bindAll, claim, conditions, harness, NS, pass, restoreOf, runningVmi, settle, source, storage, vmManifest, type Harness } from './support.ts';

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

const vmOf = async (name: string) => (await h.kube.get(VMS, NS, name)) as VirtualMachine | undefined;
const restore = (name: string) => h.kube.get(VM_RESTORES, NS, name);
const claimOf = (vm: VirtualMachine | undefined, volume: string) => vm?.spec.template.spec?.volumes?.find((v) => v.name === volume)?.persistentVolumeClaim?.claimName;
const eventsOf = async (name: string) => ((await h.kube.list(EVENTS, NS, { fieldSelector: `involvedObject.name=${name}` })).items as { type?: string; reason?: string; message?: string }[]).map((e) => `${e.type} ${e.reason} ${e.message}`);

describe('restore reconcile against the sandbox API server', () => {
  test('into the stopped source VM: first status alone, then owner+finalizer, restoreInProgress and the claim; the VM once it binds; then released and complete', async () => {
    // arrange
    const src = await source(h, 'ip-1', { restoreSize: '2Gi' });
    await h.kube.patch(VMS, NS, 'ip-1', { type: 'merge', body: { spec: { template: { spec: { domain: { resources: { requests: { memory: '256Mi' } } } } } } } });
    const r = await restoreOf(h, 'ip-1-r', src.snapshot, 'ip-1');
    const key = `${NS}/ip-1-r`;
    const uid = r.metadata?.uid ?? '';
    const claimName = `restore-${uid}-disk`;
    // act
    await pass(h, key);
    const first = await restore('ip-1-r');
    const firstActions = actions(server);
    h.advance(1000);
    await pass(h, key);
    const creating = await restore('ip-1-r');
    const locked = await vmOf('ip-1');
    h.advance(1000);
    const waitingPasses = await settle(server, h, key);
    const waiting = await restore('ip-1-r');
    await bindAll(h);
    h.advance(1000);
    await pass(h, key);
    const updating = await restore('ip-1-r');
    h.advance(1000);
    await settle(server, h, key);
    // assert: the first pass writes the first status only
    assert.deepEqual(firstActions, ['update virtualmachinerestores/status ip-1-r']);
    assert.deepEqual(first?.status?.complete, false);
    assert.deepEqual(conditions(first), ['Progressing=True Initializing VirtualMachineRestore', 'Ready=False Initializing VirtualMachineRestore']);
    assert.equal(first?.metadata?.finalizers, undefined);
    // owner and finalizer, the VM held, the claim created from the VolumeSnapshot
    assert.deepEqual(creating?.metadata?.finalizers, ['snapshot.kubevirt.io/vmrestore-protection']);
    assert.deepEqual(creating?.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'ip-1', uid: src.vm.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    assert.equal(locked?.status?.restoreInProgress, 'ip-1-r');
    assert.deepEqual(conditions(creating), ['Progressing=True Creating new PVCs', 'Ready=False Waiting for new PVCs']);
    assert.deepEqual(creating?.status?.restores, [{ volumeName: 'disk', persistentVolumeClaim: claimName, volumeSnapshotName: src.volumeSnapshot }]);
    // a Pending claim of an Immediate class is waited for, writing nothing; timestamps kept
    assert.equal(waitingPasses.length, 1);
    assert.deepEqual(waiting?.status, creating?.status);
    // the restore claim (§2.4)
    const pvc = await h.kube.get(PVCS, NS, claimName);
    assert.deepEqual(pvc?.metadata?.labels, { app: 'ip-1', 'restore.kubevirt.io/source-vm-name': 'ip-1', 'restore.kubevirt.io/source-vm-namespace': NS });
    assert.deepEqual(pvc?.metadata?.annotations, { 'cdi.kubevirt.io/storage.contentType': 'kubevirt', keep: 'me', 'restore.kubevirt.io/name': 'ip-1-r', 'restore.kubevirt.io/lastRestoreUID': `ip-1-r-${uid}` });
    assert.deepEqual(pvc?.spec?.dataSource, { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: src.volumeSnapshot });
    assert.deepEqual(pvc?.spec?.dataSourceRef, { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: src.volumeSnapshot });
    assert.equal(pvc?.spec?.resources?.requests?.storage, '2Gi', 'the larger restoreSize');
    assert.equal(pvc?.spec?.storageClassName, 'test-sc');
    assert.deepEqual(pvc?.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}`), ['VirtualMachine/ip-1']);
    // the target updated
    assert.deepEqual(conditions(updating), ['Progressing=True Updating target spec', 'Ready=False Waiting for target update']);
    const vm = await vmOf('ip-1');
    assert.equal(claimOf(vm, 'disk'), claimName);
    assert.equal(vm?.spec.template.spec?.domain.resources?.requests?.memory, '128Mi', 'the snapshot spec');
    assert.equal(vm?.spec.runStrategy, 'Halted');
    assert.equal(vm?.spec.template.spec?.domain.firmware?.uuid, legacyFirmwareUuid('ip-1'));
    assert.equal(vm?.metadata?.annotations?.['restore.kubevirt.io/lastRestoreUID'], `ip-1-r-${uid}`);
    // released and complete, the condition times moved only with their reasons
    assert.equal(vm?.status?.restoreInProgress, undefined);
    const done = await restore('ip-1-r');
    assert.equal(done?.status?.complete, true);
    assert.ok(done?.status?.restoreTime);
    assert.equal(done?.status && 'deletedDataVolumes' in done.status, false, "KubeVirt's omitempty: no DataVolumes deleted is no field, not []");
    assert.deepEqual(conditions(done), ['Progressing=False Operation complete', 'Ready=True Operation complete']);
    const times = (x: typeof done | undefined) => x?.status?.conditions?.map((c) => c.lastTransitionTime);
    assert.deepEqual(times(waiting), times(creating));
    assert.notDeepEqual(times(done), times(updating));
    assert.ok((await eventsOf('ip-1-r')).includes('Normal VirtualMachineRestoreComplete Successfully completed VirtualMachineRestore ip-1-r'));
    // a complete restore is frozen
    server.audit.clear();
    await settle(server, h, key);
    assert.deepEqual(actions(server), []);
  });

  test('a claim of a WaitForFirstConsumer class is not waited for', async () => {
    // arrange: the backup claim's class binds on first consumer
    const src = await source(h, 'wffc-1');
    const content = await h.kube.get(VM_SNAPSHOT_CONTENTS, NS, src.content);
    content!.spec!.volumeBackups![0]!.persistentVolumeClaim.spec.storageClassName = 'test-wffc';
    await h.kube.update(VM_SNAPSHOT_CONTENTS, content!);
    await restoreOf(h, 'wffc-1-r', src.snapshot, 'wffc-1');
    // act
    await settle(server, h, `${NS}/wffc-1-r`);
    // assert: complete with its claim still Pending
    const done = await restore('wffc-1-r');
    assert.equal(done?.status?.complete, true);
    assert.equal((await h.kube.get(PVCS, NS, done?.status?.restores?.[0]?.persistentVolumeClaim ?? ''))?.status?.phase ?? 'Pending', 'Pending');
  });

  test('InPlace: the original claim deleted, then recreated under its own name from the VolumeSnapshot', async () => {
    // arrange
    const src = await source(h, 'inpl-1');
    const before = await h.kube.get(PVCS, NS, 'inpl-1-disk');
    await restoreOf(h, 'inpl-1-r', src.snapshot, 'inpl-1', { volumeRestorePolicy: 'InPlace' });
    // act
    await settle(server, h, `${NS}/inpl-1-r`, () => bindAll(h));
    // assert
    const pvc = await h.kube.get(PVCS, NS, 'inpl-1-disk');
    assert.notEqual(pvc?.metadata?.uid, before?.metadata?.uid, 'a new claim');
    assert.equal(pvc?.spec?.dataSource?.name, src.volumeSnapshot);
    assert.ok(actions(server).includes('delete persistentvolumeclaims inpl-1-disk'));
    assert.equal(claimOf(await vmOf('inpl-1'), 'disk'), 'inpl-1-disk');
    assert.equal((await restore('inpl-1-r'))?.status?.complete, true);
  });

  test('backend storage: the restored backend claim labelled for the VM, the original given up and deleted once done', async () => {
    // arrange: a VM with a persistent TPM, its backend claim in the snapshot
    const src = await source(h, 'be-1', { backend: true });
    const r = await restoreOf(h, 'be-1-r', src.snapshot, 'be-1');
    const restored = `restore-${r.metadata?.uid ?? ''}-persistent-state-for-be-1`;
    // act
    const outcomes = await settle(server, h, `${NS}/be-1-r`, () => bindAll(h));
    // assert
    assert.ok(outcomes.every((o) => typeof o !== 'string'), JSON.stringify(outcomes));
    assert.equal((await restore('be-1-r'))?.status?.complete, true);
    assert.equal((await h.kube.get(PVCS, NS, restored))?.metadata?.labels?.['persistent-state-for'], 'be-1');
    const labelled = await h.kube.list(PVCS, NS, { labelSelector: 'persistent-state-for=be-1' });
    assert.deepEqual(labelled.items.map((p) => p.metadata?.name), [restored], 'exactly one backend claim for the VM');
    const old = await h.kube.get(PVCS, NS, 'be-1-backend');
    assert.ok(old === undefined || old.metadata?.deletionTimestamp, 'the original deleted');
    assert.ok(actions(server).includes('delete persistentvolumeclaims be-1-backend'));
  });

  test('into a new VM: created Halted with the snapshot VM labels and the patches, the claims marked owned-by-vm handed to it', async () => {
    // arrange: the source VM owns its claim
    const src = await source(h, 'nv-src', { ownedClaim: true });
    const r = await restoreOf(h, 'nv-1-r', src.snapshot, 'nv-1', { patches: ['{"op":"add","path":"/metadata/labels/cloned","value":"yes"}', '{"op":"replace","path":"/spec/template/spec/domain/firmware","value":{"serial":"s-1"}}'] });
    const claimName = `restore-${r.metadata?.uid ?? ''}-disk`;
    // act
    const outcomes = await settle(server, h, `${NS}/nv-1-r`, () => bindAll(h));
    // assert
    assert.ok(outcomes.every((o) => typeof o !== 'string'), JSON.stringify(outcomes));
    const vm = await vmOf('nv-1');
    assert.equal(vm?.spec.runStrategy, 'Halted');
    assert.deepEqual(vm?.metadata?.labels, { app: 'nv-src', cloned: 'yes' });
    assert.deepEqual(vm?.spec.template.spec?.domain.firmware, { serial: 's-1' });
    assert.equal(claimOf(vm, 'disk'), claimName);
    const pvc = await h.kube.get(PVCS, NS, claimName);
    assert.deepEqual(pvc?.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}/${o.uid}`), [`VirtualMachine/nv-1/${vm?.metadata?.uid}`]);
    assert.equal(pvc?.metadata?.annotations?.['restore.kubevirt.io/owned-by-vm'], undefined, 'the mark dropped once handed over');
    const done = await restore('nv-1-r');
    assert.equal(done?.status?.complete, true);
    assert.deepEqual(done?.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}`), ['VirtualMachine/nv-1'], 'owned by the VM once it exists');
    assert.equal(claimOf(await vmOf('nv-src'), 'disk'), 'nv-src-disk', 'the source untouched');
  });

  test('a running target: each readiness policy', async () => {
    const table: { policy?: string; after?: number; conditions: string[]; events: string[]; stop?: boolean }[] = [
      {
        conditions: [
          'Progressing=False Waiting for target VM to be powered off. Please stop the restore target to proceed with restore, or the operation will fail after 5m0s',
          'Ready=False Waiting for target VM to be powered off. Please stop the restore target to proceed with restore, or the operation will fail after 5m0s',
        ],
        events: ['Warning RestoreTargetNotReady Restore target VMI still exists, please stop the restore target to proceed with restore'],
      },
      {
        after: 5 * 60_000 + 30_000,
        conditions: [
          'Progressing=False Restore target failed to be ready within 5m0s. Please power off the target VM before attempting restore',
          'Ready=False Restore target failed to be ready within 5m0s. Please power off the target VM before attempting restore',
          'Failure=True Restore target failed to be ready within 5m0s. Please power off the target VM before attempting restore',
        ],
        events: ['Warning Operation failed VirtualMachineRestore failed Restore target failed to be ready within 5m0s. Please power off the target VM before attempting restore'],
      },
      {
        policy: 'WaitEventually',
        after: 10 * 60_000,
        conditions: ['Progressing=False Waiting for target VM to be powered off. Please stop the restore target to proceed with restore', 'Ready=False Waiting for target VM to be powered off. Please stop the restore target to proceed with restore'],
        events: ['Warning RestoreTargetNotReady Restore target VMI still exists, please stop the restore target to proceed with restore'],
      },
      {
        policy: 'FailImmediate',
        conditions: ['Progressing=False Restore target VMI must be powered off before restore operation', 'Ready=False Restore target VMI must be powered off before restore operation', 'Failure=True Restore target VMI must be powered off before restore operation'],
        events: ['Warning Operation failed VirtualMachineRestore failed Restore target VMI must be powered off before restore operation'],
      },
      {
        policy: 'StopTarget',
        conditions: ['Progressing=False Automatically stopping restore target for restore operation', 'Ready=False Automatically stopping restore target for restore operation'],
        events: ['Warning RestoreTargetNotReady Automatically stopping restore target for restore operation'],
        stop: true,
      },
    ];
    for (const [i, row] of table.entries()) {
      // arrange
      const name = `rdy-${i}`;
      const src = await source(h, name);
      await runningVmi(h, name);
      await restoreOf(h, `${name}-r`, src.snapshot, name, row.policy ? { targetReadinessPolicy: row.policy } : {});
      await pass(h, `${NS}/${name}-r`);
      h.advance(row.after ?? 0);
      h.virtApi.calls.length = 0;
      // act
      await settle(server, h, `${NS}/${name}-r`);
      // assert
      const r = await restore(`${name}-r`);
      assert.deepEqual(conditions(r), row.conditions, `${row.policy ?? 'default'}`);
      assert.deepEqual([...new Set(await eventsOf(`${name}-r`))], row.events, `${row.policy ?? 'default'}`);
      assert.deepEqual([...new Set(h.virtApi.calls)], row.stop ? [`stop ${name}`] : [], `${row.policy ?? 'default'}`);
      assert.equal((await vmOf(name))?.status?.restoreInProgress, undefined, 'the VM is not held while it runs');
    }
  });

  test('the target stopped after waiting: the restore goes on', async () => {
    // arrange
    const src = await source(h, 'stop-1');
    await runningVmi(h, 'stop-1');
    await restoreOf(h, 'stop-1-r', src.snapshot, 'stop-1');
    await settle(server, h, `${NS}/stop-1-r`);
    // act
    await h.kube.delete(VMIS, NS, 'stop-1');
    await settle(server, h, `${NS}/stop-1-r`, () => bindAll(h));
    // assert
    assert.equal((await restore('stop-1-r'))?.status?.complete, true);
  });

  test('the snapshot checks: each a condition and a VirtualMachineRestoreError event, waiting (no retry) for the snapshot to change', async () => {
    const table: { name: string; setup: (n: string) => Promise<string>; reason: (n: string) => string }[] = [
      { name: 'chk-missing', setup: async () => 'no-such-snap', reason: () => `VMSnapshot ${NS}/no-such-snap does not exist` },
      {
        name: 'chk-failed',
        setup: async (n) => {
          const s = await source(h, n);
          await h.kube.patch(VM_SNAPSHOTS, NS, s.snapshot, { type: 'merge', body: { status: { phase: 'Failed' } } }, { subresource: 'status' });
          return s.snapshot;
        },
        reason: (n) => `VMSnapshot ${NS}/${n}-snap failed and is invalid to use`,
      },
      { name: 'chk-notready', setup: async (n) => (await source(h, n, { snapshotReady: false })).snapshot, reason: (n) => `VMSnapshot ${NS}/${n}-snap not ready` },
      { name: 'chk-content', setup: async (n) => (await source(h, n, { contentReady: false })).snapshot, reason: (n) => `VMSnapshotContent ${NS}/vmsnapshot-content-${n} not ready` },
    ];
    for (const row of table) {
      // arrange
      await h.kube.create(VMS, vmManifest(`${row.name}-t`));
      const snap = await row.setup(row.name);
      await restoreOf(h, `${row.name}-r`, snap, row.name === 'chk-missing' ? `${row.name}-t` : row.name);
      // act
      const outcomes = await settle(server, h, `${NS}/${row.name}-r`);
      // assert
      const reason = row.reason(row.name);
      assert.deepEqual(conditions(await restore(`${row.name}-r`)), [`Progressing=False ${reason}`, `Ready=False ${reason}`], row.name);
      assert.ok((await eventsOf(`${row.name}-r`)).includes(`Warning VirtualMachineRestoreError VirtualMachineRestore encountered error ${reason}`), row.name);
      assert.ok(outcomes.every((o) => typeof o !== 'string' && o.kind === 'done'), `${row.name}: ${JSON.stringify(outcomes)}`);
    }
  });

  test('a target that is another VM than the snapshot source: a condition, nothing written to it', async () => {
    // arrange
    const src = await source(h, 'oth-src');
    await h.kube.create(VMS, vmManifest('oth-t'));
    await restoreOf(h, 'oth-r', src.snapshot, 'oth-t');
    // act
    await settle(server, h, `${NS}/oth-r`);
    // assert
    assert.deepEqual(conditions(await restore('oth-r')), ['Progressing=False restore source and restore target are different but restore target already exists', 'Ready=False restore source and restore target are different but restore target already exists']);
    assert.ok(!actions(server).some((a) => a.includes('virtualmachines') && a.endsWith(' oth-t') && !a.startsWith('update virtualmachinerestores')));
    assert.equal((await vmOf('oth-t'))?.status?.restoreInProgress, undefined);
  });

  test('another restore in progress on the VM: an error (retried), no condition change', async () => {
    // arrange
    const src = await source(h, 'busy-1');
    await h.kube.patch(VMS, NS, 'busy-1', { type: 'merge', body: { status: { restoreInProgress: 'someone-else' } } }, { subresource: 'status' });
    await restoreOf(h, 'busy-1-r', src.snapshot, 'busy-1');
    await pass(h, `${NS}/busy-1-r`);
    // act
    const out = await pass(h, `${NS}/busy-1-r`);
    // assert
    assert.equal(out, 'vm restore someone-else in progress');
    assert.deepEqual(conditions(await restore('busy-1-r')), ['Progressing=True Initializing VirtualMachineRestore', 'Ready=False Initializing VirtualMachineRestore']);
    assert.equal(await h.kube.get(PVCS, NS, `restore-${(await restore('busy-1-r'))?.metadata?.uid}-disk`), undefined);
  });

  test('deletion mid-way: restoreInProgress released, "VM restore is deleting", then the finalizer removed', async () => {
    // arrange
    const src = await source(h, 'del-1');
    await restoreOf(h, 'del-1-r', src.snapshot, 'del-1');
    await settle(server, h, `${NS}/del-1-r`);
    const held = (await vmOf('del-1'))?.status?.restoreInProgress;
    // act
    await h.kube.delete(VM_RESTORES, NS, 'del-1-r');
    await pass(h, `${NS}/del-1-r`);
    const deleting = await restore('del-1-r');
    await pass(h, `${NS}/del-1-r`);
    // assert
    assert.equal(held, 'del-1-r');
    assert.deepEqual(conditions(deleting), ['Progressing=False VM restore is deleting', 'Ready=False VM restore is deleting']);
    assert.equal((await vmOf('del-1'))?.status?.restoreInProgress, undefined);
    assert.equal(await restore('del-1-r'), undefined, 'gone once the finalizer is removed');
  });

  test('an unknown target kind: the error path, permanent', async () => {
    // arrange
    const src = await source(h, 'kind-1');
    await restoreOf(h, 'kind-1-r', src.snapshot, 'kind-1', { target: { apiGroup: 'example.com', kind: 'Thing', name: 'x' } });
    await pass(h, `${NS}/kind-1-r`);
    // act
    const out = await pass(h, `${NS}/kind-1-r`);
    // assert
    assert.match(String(out), /unknown source \{APIGroup:example.com Kind:Thing Name:x\}$/);
    assert.ok(conditions(await restore('kind-1-r')).includes('Ready=False unknown source {APIGroup:example.com Kind:Thing Name:x}'));
  });

  test('a claim already Lost: the error path with its phase', async () => {
    // arrange
    const src = await source(h, 'lost-1');
    const r = await restoreOf(h, 'lost-1-r', src.snapshot, 'lost-1');
    await claim(h, `restore-${r.metadata?.uid ?? ''}-disk`, { phase: 'Lost' });
    await pass(h, `${NS}/lost-1-r`);
    // act
    const out = await pass(h, `${NS}/lost-1-r`);
    // assert
    const reason = `PVC ${NS}/restore-${r.metadata?.uid ?? ''}-disk in status "Lost"`;
    assert.equal(out, reason);
    assert.ok(conditions(await restore('lost-1-r')).includes(`Ready=False ${reason}`));
  });
});
