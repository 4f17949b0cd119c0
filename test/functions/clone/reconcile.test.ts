/**
 * The clone reconcile against the sandbox API server (reference-replicas-pools-clones §3): a VM
 * source walked from the temporary snapshot to a Succeeded clone with its temporary objects
 * deleted, a snapshot source (the user's snapshot kept), and the pending, failing and error
 * paths with their conditions and events. The snapshot and restore controllers are played by
 * hand between passes (their objects' statuses, the content, the target VM and restored claims).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { PVCS, VM_CLONES, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMS } from '../../../shared/api/resources.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import type { VirtualMachineClone } from '../../../shared/api/snapshot.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { InvalidInputError } from '../../../shared/errors.ts';
import type { CloneDeps } from '../../../functions/clone/deps.ts';
import { reconcileClone } from '../../../functions/clone/reconcile.ts';

const CONTROLLER = 'clone-controller';
const NS = 'default';
let server: ApiServer;
let kube: KubeClient;
let deps: CloneDeps;

before(async () => {
  server = await startApiServer({ port: 0 });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  kube = createKubeClient(server.kubeConfig('test'));
  deps = { kube: createKubeClient(server.kubeConfig(CONTROLLER)), now: Date.now, log: { info: () => undefined, warn: () => undefined }, random: () => 0 };
  server.audit.clear();
});

/** One pass; a thrown error is its message. */
async function pass(name: string): Promise<string | undefined> {
  try {
    await reconcileClone(`${NS}/${name}`, deps);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
/** The clone's events, `Type Reason: message`, in order. */
const events = (clone: string) =>
  server.audit
    .query({ identity: CONTROLLER })
    .filter((e) => e.resource === 'events' && (e.object as { involvedObject?: { name?: string } }).involvedObject?.name === clone)
    .map((e) => {
      const o = e.object as { type?: string; reason?: string; message?: string };
      return `${o.type} ${o.reason}: ${o.message}`;
    });
const getClone = (name: string) => kube.get(VM_CLONES, NS, name);
const conditions = (c: VirtualMachineClone | undefined) => (c?.status?.conditions ?? []).map((x) => `${x.type}=${x.status} ${x.reason ?? ''}`);

/** A stopped VM with a containerDisk and a PVC volume `disk`, labelled and annotated, one interface and firmware; its volumes' snapshot support as the snapshot controller reports it. */
async function sourceVm(name: string, opts: { snapshotStatuses?: boolean; tpm?: boolean } = {}): Promise<VirtualMachine> {
  const vm = await kube.create(VMS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, labels: { app: 'web', 'tmp/x': '1' }, annotations: { 'note/keep': 'k', 'drop-me': 'd' } },
    spec: {
      runStrategy: 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name } },
        spec: {
          domain: {
            devices: { disks: [{ name: 'disk', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', masquerade: {}, macAddress: '02:00:00:aa:aa:aa' }], ...(opts.tpm ? { tpm: { persistent: true } } : {}) },
            firmware: { serial: 'old-serial', uuid: '11111111-1111-1111-1111-111111111111' },
            resources: { requests: { memory: '128Mi' } },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: `${name}-disk` } }],
        },
      },
    },
  } as VirtualMachine);
  if (opts.snapshotStatuses !== false) await kube.patch(VMS, NS, name, { type: 'merge', body: { status: { volumeSnapshotStatuses: [{ name: 'disk', enabled: true }] } } }, { subresource: 'status' });
  return (await kube.get(VMS, NS, name))!;
}

async function cloneOf(name: string, source: { kind: string; name: string; apiGroup?: string }, spec: Partial<NonNullable<VirtualMachineClone['spec']>> = {}): Promise<VirtualMachineClone> {
  const apiGroup = source.apiGroup ?? (source.kind === 'VirtualMachineSnapshot' ? 'snapshot.kubevirt.io' : 'kubevirt.io');
  return kube.create(VM_CLONES, { apiVersion: 'clone.kubevirt.io/v1beta1', kind: 'VirtualMachineClone', metadata: { name, namespace: NS }, spec: { source: { ...source, apiGroup }, target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: `${name}-target` }, ...spec } });
}

/** The snapshot controller's part: the snapshot ready, its content holding the VM and (unless `backups: false`) its volume. */
async function snapshotReady(snapshot: string, vm: VirtualMachine, opts: { backups?: boolean; content?: boolean } = {}): Promise<void> {
  const s = (await kube.get(VM_SNAPSHOTS, NS, snapshot))!;
  const contentName = `vmsnapshot-content-${s.metadata?.uid ?? ''}`;
  if (opts.content !== false) {
    await kube.create(VM_SNAPSHOT_CONTENTS, {
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineSnapshotContent',
      metadata: { name: contentName, namespace: NS },
      spec: {
        virtualMachineSnapshotName: snapshot,
        source: { virtualMachine: { metadata: { name: vm.metadata?.name, namespace: NS, labels: vm.metadata?.labels, annotations: vm.metadata?.annotations }, spec: vm.spec as never } },
        volumeBackups: opts.backups === false ? [] : [{ volumeName: 'disk', persistentVolumeClaim: { metadata: { name: `${vm.metadata?.name}-disk` }, spec: {} }, volumeSnapshotName: `vmsnapshot-x-volume-disk` }],
      },
    });
  }
  await kube.update(VM_SNAPSHOTS, { ...s, status: { readyToUse: true, phase: 'Succeeded', virtualMachineSnapshotContentName: contentName } }, { subresource: 'status' });
}

/** The restore controller's part: the target VM (marked as restored), its claim (Bound unless told), the restore complete. */
async function restoreDone(restore: string, opts: { claimPhase?: string } = {}): Promise<void> {
  const r = (await kube.get(VM_RESTORES, NS, restore))!;
  const target = r.spec?.target?.name ?? '';
  await kube.create(VMS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: target, namespace: NS, annotations: { 'restore.kubevirt.io/lastRestoreUID': `${restore}-${r.metadata?.uid ?? ''}` } }, spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } } } as VirtualMachine);
  const claim = `restore-${r.metadata?.uid ?? ''}-disk`;
  await kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: NS, annotations: { 'restore.kubevirt.io/name': restore } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  await kube.patch(PVCS, NS, claim, { type: 'merge', body: { status: { phase: opts.claimPhase ?? 'Bound' } } }, { subresource: 'status' });
  await kube.update(VM_RESTORES, { ...r, status: { complete: true, restores: [{ volumeName: 'disk', persistentVolumeClaim: claim, volumeSnapshotName: 'vmsnapshot-x-volume-disk' }] } }, { subresource: 'status' });
}

describe('clone reconcile against the sandbox API server', () => {
  test('a VM source, step by step: tmp snapshot, tmp restore with the patches, Succeeded, temporary objects deleted', async () => {
    // arrange
    const vm = await sourceVm('src-1');
    const c = await cloneOf('c1', { kind: 'VirtualMachine', name: 'src-1' }, { labelFilters: ['app'], annotationFilters: ['note/*'], newMacAddresses: { default: '02:00:00:00:00:01' }, newSMBiosSerial: 'sn-new' });
    const uid = c.metadata?.uid ?? '';
    // act 1: the snapshot
    assert.equal(await pass('c1'), undefined);
    const afterSnapshot = await getClone('c1');
    const snapshot = await kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`);
    // act 2: not ready yet: nothing moves
    assert.equal(await pass('c1'), undefined);
    // act 3: ready → the restore
    await snapshotReady(`tmp-snapshot-${uid}`, vm);
    assert.equal(await pass('c1'), undefined);
    const afterRestore = await getClone('c1');
    const restore = await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`);
    // act 4: restore complete, target and claim there → Succeeded written; the next pass (woken by
    // that write) cleans up — never the pass that reaches Succeeded (chaos seed 791053)
    await restoreDone(`tmp-restore-${uid}`);
    assert.equal(await pass('c1'), undefined);
    const succeeded = await getClone('c1');
    const keptUntilWritten = [await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`), await kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`)].map((o) => o !== undefined);
    assert.equal(await pass('c1'), undefined);
    const final = await getClone('c1');
    // assert
    assert.equal(afterSnapshot?.status?.phase, 'SnapshotInProgress');
    assert.equal(afterSnapshot?.status?.snapshotName, `tmp-snapshot-${uid}`);
    assert.deepEqual(conditions(afterSnapshot), ['Progressing=True Still processing', 'Ready=False Still processing']);
    assert.deepEqual(snapshot?.spec, { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'src-1' } });
    assert.deepEqual(snapshot?.metadata?.ownerReferences?.map((o) => `${o.kind} ${o.name} ${o.uid} ${o.controller}`), [`VirtualMachineClone c1 ${uid} true`]);
    assert.equal(afterRestore?.status?.phase, 'RestoreInProgress');
    assert.equal(afterRestore?.status?.restoreName, `tmp-restore-${uid}`);
    assert.deepEqual(restore?.spec?.target, { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'c1-target' });
    assert.equal(restore?.spec?.virtualMachineSnapshotName, `tmp-snapshot-${uid}`);
    assert.deepEqual(restore?.spec?.patches, [
      '{"op":"replace","path":"/spec/template/spec/domain/devices/interfaces/0/macAddress","value":"02:00:00:00:00:01"}',
      '{"op":"replace","path":"/spec/template/spec/domain/firmware/serial","value":"sn-new"}',
      '{"op":"remove","path":"/metadata/labels/tmp~1x","value":null}',
      '{"op":"remove","path":"/metadata/annotations/drop-me","value":null}',
      '{"op":"replace","path":"/spec/template/spec/domain/firmware/uuid","value":""}',
    ]);
    assert.equal(succeeded?.status?.phase, 'Succeeded');
    assert.deepEqual(keptUntilWritten, [true, true], 'the temporary restore and snapshot stay until Succeeded is stored');
    assert.equal(final?.status?.phase, 'Succeeded');
    assert.equal(final?.status?.targetName, 'c1-target');
    assert.equal(final?.status?.snapshotName, undefined);
    assert.equal(final?.status?.restoreName, undefined);
    assert.deepEqual(conditions(final), ['Progressing=False Ready', 'Ready=True Ready']);
    assert.equal(await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`), undefined, 'restore deleted');
    assert.equal(await kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`), undefined, 'snapshot deleted');
    assert.deepEqual(events('c1'), [
      `Normal SnapshotCreated: created snapshot tmp-snapshot-${uid} for clone c1`,
      `Normal SnapshotReady: snapshot tmp-snapshot-${uid} for clone c1 is ready to use`,
      `Normal RestoreCreated: created restore tmp-restore-${uid} for clone c1`,
      `Normal RestoreReady: restore tmp-restore-${uid} for clone c1 is ready to use`,
      'Normal TargetVMCreated: created target VM c1-target for clone c1',
      'Normal PVCBound: all PVC for clone c1 are bound',
    ]);
    // act 5: settled: another pass writes nothing
    server.audit.clear();
    assert.equal(await pass('c1'), undefined);
    assert.deepEqual(server.audit.query({ identity: CONTROLLER }).map((e) => `${e.verb} ${e.resource} ${JSON.stringify((e.object as VirtualMachineClone).status)}`), [], JSON.stringify(final?.status));
  });

  /** A VM-source clone taken to RestoreInProgress with its restore complete; its uid. */
  async function restoredClone(name: string, source: string): Promise<string> {
    const vm = await sourceVm(source);
    const uid = (await cloneOf(name, { kind: 'VirtualMachine', name: source })).metadata?.uid ?? '';
    await pass(name);
    await snapshotReady(`tmp-snapshot-${uid}`, vm);
    await pass(name);
    await restoreDone(`tmp-restore-${uid}`);
    return uid;
  }
  /** The controller's client with its methods bound, to override one. */
  const kubeOf = () => ({ ...deps.kube, get: deps.kube.get.bind(deps.kube), create: deps.kube.create.bind(deps.kube), delete: deps.kube.delete.bind(deps.kube), createEvent: deps.kube.createEvent.bind(deps.kube), update: deps.kube.update.bind(deps.kube) });

  test('the pass that reaches Succeeded loses its status write (a killed worker): the next pass still finds its snapshot and succeeds (chaos seed 791053)', async () => {
    // arrange: a clone at RestoreInProgress with its restore done
    const uid = await restoredClone('c-lost', 'src-lost');
    // act: the pass that reaches Succeeded dies at its status write
    const lossy = { ...kubeOf(), update: () => Promise.reject(new Error('worker killed')) } as CloneDeps['kube'];
    const died = await reconcileClone(`${NS}/c-lost`, { ...deps, kube: lossy }).then(() => 'no error', (err: Error) => err.message);
    const afterDeath = (await getClone('c-lost'))?.status?.phase;
    for (let i = 0; i < 3; i++) await pass('c-lost');
    const final = await getClone('c-lost');
    // assert
    assert.equal(died, 'worker killed');
    assert.equal(afterDeath, 'RestoreInProgress', 'nothing stored');
    assert.equal(final?.status?.phase, 'Succeeded', JSON.stringify(final?.status));
    assert.equal(await kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`), undefined, 'cleaned up after Succeeded was stored');
  });

  test('the clean-up pass dies between deleting the restore and the snapshot: the next pass deletes the snapshot and settles (chaos clone seed 2, emulator/aws)', async () => {
    // arrange: a Succeeded clone whose clean-up deleted the restore and then lost its snapshot delete (a killed worker, a refused request)
    const uid = await restoredClone('c-half', 'src-half');
    await pass('c-half'); // Succeeded stored
    const refusing = { ...kubeOf(), delete: (res: Parameters<CloneDeps['kube']['delete']>[0], ...rest: unknown[]) => (res === VM_SNAPSHOTS ? Promise.reject(new Error('worker killed')) : (deps.kube.delete as (...a: unknown[]) => Promise<boolean>)(res, ...rest)) } as CloneDeps['kube'];
    const died = await reconcileClone(`${NS}/c-half`, { ...deps, kube: refusing }).then(() => 'no error', (err: Error) => err.message);
    const between = [await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`), await kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`)].map((o) => o !== undefined);
    // act
    const next = await pass('c-half');
    const final = await getClone('c-half');
    // assert: KubeVirt would wait for ever for the restore it deleted ("restore … is not created yet") and leave the snapshot
    assert.match(died, /cannot clean up snapshot/);
    assert.deepEqual(between, [false, true], 'restore gone, snapshot left');
    assert.equal(next, undefined, 'the pass settles');
    assert.equal(await kube.get(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`), undefined, 'the temporary snapshot deleted');
    assert.equal(final?.status?.phase, 'Succeeded');
    assert.equal(final?.status?.restoreName, undefined);
    assert.equal(final?.status?.snapshotName, undefined);
  });

  test('a snapshot source: unset → RestoreInProgress in one write, no snapshot taken, the user snapshot kept at the end', async () => {
    // arrange
    const vm = await sourceVm('src-2');
    await kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: 'user-snap', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'src-2' } } });
    await snapshotReady('user-snap', vm);
    const c = await cloneOf('c2', { kind: 'VirtualMachineSnapshot', name: 'user-snap' });
    // act
    await pass('c2');
    const first = await getClone('c2');
    await restoreDone(`tmp-restore-${c.metadata?.uid ?? ''}`);
    await pass('c2'); // Succeeded
    await pass('c2'); // the clean-up
    // assert
    assert.equal(first?.status?.phase, 'RestoreInProgress');
    assert.equal(first?.status?.snapshotName, undefined, 'never set for a snapshot source');
    assert.equal(first?.status?.restoreName, `tmp-restore-${c.metadata?.uid ?? ''}`);
    assert.equal((await getClone('c2'))?.status?.phase, 'Succeeded');
    assert.ok(await kube.get(VM_SNAPSHOTS, NS, 'user-snap'), 'the user snapshot stays');
    assert.equal(await kube.get(VM_RESTORES, NS, `tmp-restore-${c.metadata?.uid ?? ''}`), undefined);
  });

  const badInput = [
    { name: 'source VM missing: pending, phase unset', make: () => cloneOf('bad-1', { kind: 'VirtualMachine', name: 'nope' }), phase: '', conditions: ['Progressing=False Pending', 'Ready=False Source doesnt exist: VirtualMachine default/nope'], event: 'Normal SourceDoesNotExist: Source doesnt exist: VirtualMachine default/nope' },
    { name: 'source snapshot missing: pending', make: () => cloneOf('bad-2', { kind: 'VirtualMachineSnapshot', name: 'nope' }), phase: '', conditions: ['Progressing=False Pending', 'Ready=False Source doesnt exist: VirtualMachineSnapshot default/nope'], event: 'Normal SourceDoesNotExist: Source doesnt exist: VirtualMachineSnapshot default/nope' },
    {
      name: 'source with backend storage: Failed',
      make: async () => (await sourceVm('tpm-src', { tpm: true }), cloneOf('bad-3', { kind: 'VirtualMachine', name: 'tpm-src' })),
      phase: 'Failed',
      conditions: ['Progressing=False Failed', 'Ready=False Clone of source with backendstorage is not supported: VM default/tpm-src'],
      event: 'Normal SourceVMWithBackendStorageInvalid: Clone of source with backendstorage is not supported: VM default/tpm-src',
    },
    {
      name: 'volume snapshot support unknown: pending, no snapshot taken',
      make: async () => (await sourceVm('nostat-src', { snapshotStatuses: false }), cloneOf('bad-4', { kind: 'VirtualMachine', name: 'nostat-src' })),
      phase: '',
      conditions: ['Progressing=False Pending', 'Ready=False Virtual Machine volume disk snapshot support unknown'],
      event: 'Normal VMVolumeSnapshotsInvalid: Virtual Machine volume disk snapshot support unknown',
    },
    {
      name: 'the target VM exists already (not in KubeVirt): Failed before any restore',
      make: async () => {
        const vm = await sourceVm('exists-src');
        const c = await cloneOf('bad-5', { kind: 'VirtualMachine', name: 'exists-src' }, { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'exists-src' } });
        await pass('bad-5');
        await snapshotReady(`tmp-snapshot-${c.metadata?.uid ?? ''}`, vm);
        return c;
      },
      phase: 'Failed',
      conditions: ['Progressing=False Failed', 'Ready=False target VM default/exists-src already exists'],
      event: 'Normal TargetVMExists: target VM default/exists-src already exists',
    },
    {
      name: 'a content volume not backed up: Failed SnapshotContentInvalid',
      make: async () => {
        const vm = await sourceVm('nobackup-src');
        const c = await cloneOf('bad-6', { kind: 'VirtualMachine', name: 'nobackup-src' });
        await pass('bad-6');
        await snapshotReady(`tmp-snapshot-${c.metadata?.uid ?? ''}`, vm, { backups: false });
        return c;
      },
      phase: 'Failed',
      conditions: ['Progressing=False Failed', 'Ready=False volume disk is not backed up in snapshot tmp-snapshot-'],
      event: 'Normal SnapshotContentInvalid: volume disk is not backed up in snapshot tmp-snapshot-',
    },
  ];
  for (const c of badInput) {
    test(`bad input: ${c.name}; the event once per pass, no error thrown`, async () => {
      // arrange
      const clone = await c.make();
      const uid = clone.metadata?.uid ?? '';
      // act
      const err = await pass(clone.metadata?.name ?? '');
      // assert
      const got = await getClone(clone.metadata?.name ?? '');
      assert.equal(err, undefined);
      assert.equal(got?.status?.phase ?? '', c.phase);
      assert.deepEqual(conditions(got), c.conditions.map((x) => (x.endsWith('tmp-snapshot-') ? `${x}${uid}` : x)));
      assert.equal(events(clone.metadata?.name ?? '').at(-1), c.event.endsWith('tmp-snapshot-') ? `${c.event}${uid}` : c.event);
      assert.equal(await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`), undefined, 'no restore');
    });
  }

  test('the snapshot deleted while restoring: Failed SnapshotDeleted', async () => {
    // arrange
    const vm = await sourceVm('del-src');
    const c = await cloneOf('c7', { kind: 'VirtualMachine', name: 'del-src' });
    const uid = c.metadata?.uid ?? '';
    await pass('c7');
    await snapshotReady(`tmp-snapshot-${uid}`, vm);
    await pass('c7');
    // act
    await kube.delete(VM_SNAPSHOTS, NS, `tmp-snapshot-${uid}`);
    await pass('c7');
    // assert
    const got = await getClone('c7');
    assert.equal(got?.status?.phase, 'Failed');
    assert.deepEqual(conditions(got), ['Progressing=False Failed', `Ready=False snapshot tmp-snapshot-${uid} does not exist anymore`]);
    assert.equal(events('c7').at(-1), `Normal SnapshotDeleted: snapshot tmp-snapshot-${uid} does not exist anymore`);
  });

  test('waits that KubeVirt reports as errors: the status still written, the error thrown to be retried; claims not Bound: no cleanup until they are', async () => {
    // arrange
    const vm = await sourceVm('wait-src');
    const c = await cloneOf('c8', { kind: 'VirtualMachine', name: 'wait-src' });
    const uid = c.metadata?.uid ?? '';
    await pass('c8');
    await snapshotReady(`tmp-snapshot-${uid}`, vm);
    await pass('c8');
    // act: the restore vanished (a user deleted it)
    await kube.delete(VM_RESTORES, NS, `tmp-restore-${uid}`);
    const gone = await pass('c8');
    // assert
    assert.equal(gone, `restore tmp-restore-${uid} is not created yet for clone c8`);
    assert.deepEqual(conditions(await getClone('c8')), ['Progressing=True Still processing', 'Ready=False Still processing']);
    // arrange: the restore back and done, but its claim still Pending
    await kube.create(VM_RESTORES, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineRestore', metadata: { name: `tmp-restore-${uid}`, namespace: NS }, spec: { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'c8-target' }, virtualMachineSnapshotName: `tmp-snapshot-${uid}` } });
    await restoreDone(`tmp-restore-${uid}`, { claimPhase: 'Pending' });
    // act
    const pending = await pass('c8');
    const held = await getClone('c8');
    const restoreHeld = await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`);
    const claim = `restore-${(await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`))?.metadata?.uid ?? ''}-disk`;
    await kube.patch(PVCS, NS, claim, { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
    await pass('c8');
    // assert
    assert.equal(pending, undefined, 'a Pending claim is no error: its Bound event wakes the clone');
    assert.equal(held?.status?.phase, 'Succeeded');
    assert.equal(held?.status?.restoreName, `tmp-restore-${uid}`, 'kept until the claims are bound');
    assert.ok(restoreHeld, 'the restore kept while a claim is Pending');
    assert.equal((await getClone('c8'))?.status?.restoreName, undefined);
    assert.equal(await kube.get(VM_RESTORES, NS, `tmp-restore-${uid}`), undefined);
  });

  test('a Succeeded clone whose target VM is deleted goes with it (Q-C8)', async () => {
    // arrange
    const vm = await sourceVm('gc-src');
    const c = await cloneOf('c9', { kind: 'VirtualMachine', name: 'gc-src' });
    const uid = c.metadata?.uid ?? '';
    await pass('c9');
    await snapshotReady(`tmp-snapshot-${uid}`, vm);
    await pass('c9');
    await restoreDone(`tmp-restore-${uid}`);
    await pass('c9');
    assert.equal((await getClone('c9'))?.status?.phase, 'Succeeded');
    // act
    await kube.delete(VMS, NS, 'c9-target');
    await pass('c9');
    // assert
    assert.equal(await getClone('c9'), undefined);
  });

  test('an unknown source kind is permanent: InvalidInputError, no status written', async () => {
    // arrange
    await cloneOf('c10', { kind: 'Pod', name: 'x', apiGroup: '' });
    // act / assert
    await assert.rejects(reconcileClone(`${NS}/c10`, deps), (err) => err instanceof InvalidInputError && /unknown source type Pod/.test(err.message));
    assert.equal((await getClone('c10'))?.status, undefined);
  });

  test('a missing clone is done, nothing written', async () => {
    assert.equal(await pass('never-made'), undefined);
    assert.deepEqual(server.audit.query({ identity: CONTROLLER }), []);
  });
});
