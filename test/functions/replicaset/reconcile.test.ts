import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../../shared/api/index.ts';
import { CONFIG_MAPS, VMI_REPLICA_SETS, VMIS } from '../../../shared/api/resources.ts';
import { decorateKubeClient } from '../../../shared/kube/call-counter.ts';
import { RS_CREATED, RS_EXPECTATIONS } from '../../../functions/replicaset/deps.ts';
import { reconcileReplicaSet } from '../../../functions/replicaset/reconcile.ts';
import { actions, events, harness, NS, ownedVmis, reconcileUntilSettled, rsManifest, vmiManifest, type Harness } from './support.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startApiServer({ port: 0, tooLargeWaitMs: 50 });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  // Every test gets a fresh state store and clock; its objects have unique names.
  h = harness(server);
  server.audit.clear();
});

async function createRs(rs: VirtualMachineInstanceReplicaSet): Promise<VirtualMachineInstanceReplicaSet> {
  return h.kube.create(VMI_REPLICA_SETS, rs);
}
async function getRs(name: string): Promise<VirtualMachineInstanceReplicaSet> {
  const rs = await h.kube.get(VMI_REPLICA_SETS, NS, name);
  assert.ok(rs, `replica set ${name} must exist`);
  return rs;
}
/** Plays virt-handler: the VMI's status by hand. */
async function setVmiStatus(name: string, status: NonNullable<VirtualMachineInstance['status']>): Promise<void> {
  await h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status } });
}
/** A real owner (the garbage collector strips references to owners that do not exist). */
async function configMapOwner(name: string): Promise<{ apiVersion: string; kind: string; name: string; uid: string }> {
  const cm = await h.kube.create(CONFIG_MAPS, { metadata: { name, namespace: NS } });
  return { apiVersion: 'v1', kind: 'ConfigMap', name, uid: cm.metadata?.uid ?? '' };
}
const READY = [{ type: 'Ready', status: 'True' }];
const cond = (rs: VirtualMachineInstanceReplicaSet, type: string) => rs.status?.conditions?.find((c) => c.type === type);
const names = (vmis: readonly VirtualMachineInstance[]) => vmis.map((v) => v.metadata?.name ?? '');

describe('replica set reconcile against the sandbox: preconditions', () => {
  test('a missing replica set drops its expectations and writes nothing', async () => {
    // arrange
    await h.state.expectations.expectCreations(RS_EXPECTATIONS, `${NS}/gone`, 3, h.deps.now());
    // act
    const out = await reconcileReplicaSet(`${NS}/gone`, h.deps);
    // assert
    assert.equal(out.kind, 'done');
    assert.equal(await h.state.expectations.get(RS_EXPECTATIONS, `${NS}/gone`), undefined);
    assert.deepEqual(actions(server), []);
  });

  test('missing API-version annotations: one update adding both, and the pass ends there', async () => {
    // arrange
    await createRs(rsManifest('annot-1', {}, false));
    // act
    await reconcileReplicaSet(`${NS}/annot-1`, h.deps);
    // assert
    assert.deepEqual(actions(server), ['update virtualmachineinstancereplicasets annot-1']);
    const rs = await getRs('annot-1');
    assert.equal(rs.metadata?.annotations?.['kubevirt.io/latest-observed-api-version'], 'v1');
    assert.equal(rs.metadata?.annotations?.['kubevirt.io/storage-observed-api-version'], 'v1');
  });

  const invalid: { name: string; spec: Partial<VirtualMachineInstanceReplicaSet['spec']> }[] = [
    { name: 'selector does not match the template labels', spec: { selector: { matchLabels: { rs: 'other' } } } },
    { name: 'template without labels', spec: { template: { metadata: {}, spec: { domain: { devices: {} } } } } },
    { name: 'unparsable selector', spec: { selector: { matchExpressions: [{ key: 'rs', operator: 'Near', values: ['x'] }] } } },
  ];
  for (const [i, c] of invalid.entries()) {
    test(`invalid spec is dropped without status or retry: ${c.name}`, async () => {
      // arrange
      const name = `invalid-${i}`;
      await createRs(rsManifest(name, c.spec));
      // act
      const out = await reconcileReplicaSet(`${NS}/${name}`, h.deps);
      // assert
      assert.equal(out.kind, 'done');
      assert.deepEqual(actions(server), []);
    });
  }
});

describe('replica set reconcile against the sandbox: scaling', () => {
  test('scale up from nothing: VMIs from the template, events, then status; counts are pre-action (Q-R4)', async () => {
    // arrange
    const rs = await createRs(rsManifest('up-1', { replicas: 3 }));
    // act
    const first = await reconcileReplicaSet(`${NS}/up-1`, h.deps);
    const afterFirst = await getRs('up-1');
    await reconcileUntilSettled(server, h, `${NS}/up-1`);
    // assert
    assert.equal(first.kind, 'done');
    const vmis = await ownedVmis(h.kube, rs.metadata?.uid);
    assert.equal(vmis.length, 3);
    for (const v of vmis) {
      assert.match(v.metadata?.name ?? '', /^up-1[a-z0-9]{5}$/, 'generateName is the replica set name verbatim (Q-R1)');
      assert.equal(v.metadata?.labels?.app, 'demo');
      assert.equal(v.metadata?.annotations?.['example.com/note'], 'from-template');
      assert.deepEqual(v.metadata?.ownerReferences, [
        { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', name: 'up-1', uid: rs.metadata?.uid, controller: true, blockOwnerDeletion: true },
      ]);
    }
    assert.equal(afterFirst.status?.replicas, 0, 'the creating pass reports the count it listed');
    assert.equal(afterFirst.status?.labelSelector, 'rs=up-1');
    const settled = await getRs('up-1');
    assert.deepEqual([settled.status?.replicas, settled.status?.readyReplicas], [3, 0]);
    assert.deepEqual(
      events(server).filter((e) => e.includes('SuccessfulCreate')).length,
      3,
    );
    assert.match(events(server)[0] ?? '', /^Normal SuccessfulCreate: Started the virtual machine by creating the new virtual machine instance up-1[a-z0-9]{5}$/);
    assert.equal(await h.state.expectations.satisfied(RS_EXPECTATIONS, `${NS}/up-1`, h.deps.now()), true);
  });

  const generateNames: { name: string; template: { name?: string; generateName?: string }; prefix: RegExp }[] = [
    { name: 'template name wins', template: { name: 'tpl', generateName: 'gen-' }, prefix: /^tpl[a-z0-9]{5}$/ },
    { name: 'then the template generateName', template: { generateName: 'gen-' }, prefix: /^gen-[a-z0-9]{5}$/ },
  ];
  for (const [i, c] of generateNames.entries()) {
    test(`generateName: ${c.name}`, async () => {
      // arrange
      const name = `gen-${i}`;
      const base = rsManifest(name, { replicas: 1 });
      base.spec.template.metadata = { ...base.spec.template.metadata, ...c.template };
      const rs = await createRs(base);
      // act
      await reconcileReplicaSet(`${NS}/${name}`, h.deps);
      // assert
      const vmis = await ownedVmis(h.kube, rs.metadata?.uid);
      assert.equal(vmis.length, 1);
      assert.match(vmis[0]?.metadata?.name ?? '', c.prefix);
    });
  }

  test('scale down: the excess is deleted with SuccessfulDelete events; deletions are expected by namespace/name', async () => {
    // arrange
    const rs = await createRs(rsManifest('down-1', { replicas: 3 }));
    await reconcileUntilSettled(server, h, `${NS}/down-1`);
    await h.kube.patch(VMI_REPLICA_SETS, NS, 'down-1', { type: 'merge', body: { spec: { replicas: 1 } } });
    server.audit.clear();
    // act
    await reconcileReplicaSet(`${NS}/down-1`, h.deps);
    const record = await h.state.expectations.get(RS_EXPECTATIONS, `${NS}/down-1`);
    await reconcileUntilSettled(server, h, `${NS}/down-1`);
    // assert
    assert.equal((await ownedVmis(h.kube, rs.metadata?.uid)).length, 1);
    assert.equal(record?.del, 2);
    assert.ok(record?.deleteKeys.every((k) => /^default\/down-1[a-z0-9]{5}$/.test(k)), `keys are namespace/name: ${record?.deleteKeys.join(',')}`);
    const deleted = events(server).filter((e) => e.startsWith('Normal SuccessfulDelete: Stopped the virtual machine by deleting the virtual machine instance '));
    assert.equal(deleted.length, 2);
    assert.equal((await getRs('down-1')).status?.replicas, 1);
  });

  test('BurstReplicas bounds one pass; the next passes finish the job', async () => {
    // arrange
    h = harness(server, { burstReplicas: 2 });
    const rs = await createRs(rsManifest('burst-1', { replicas: 5 }));
    // act
    await reconcileReplicaSet(`${NS}/burst-1`, h.deps);
    const afterOne = (await ownedVmis(h.kube, rs.metadata?.uid)).length;
    const settled = await reconcileUntilSettled(server, h, `${NS}/burst-1`);
    // assert
    assert.equal(afterOne, 2);
    assert.equal((await ownedVmis(h.kube, rs.metadata?.uid)).length, 5);
    assert.ok(settled.passes >= 3);
  });

  test('replicas unset means 1', async () => {
    // arrange
    const base = rsManifest('one-1');
    delete base.spec.replicas;
    const rs = await createRs(base);
    // act
    await reconcileUntilSettled(server, h, `${NS}/one-1`);
    // assert
    assert.equal((await ownedVmis(h.kube, rs.metadata?.uid)).length, 1);
  });
});

describe('replica set reconcile against the sandbox: which VMIs count (Q-R3)', () => {
  const cases: { name: string; status?: NonNullable<VirtualMachineInstance['status']>; deleting?: boolean; cleaned: string | undefined }[] = [
    { name: 'Succeeded: replaced, then deleted as finished', status: { phase: 'Succeeded' }, cleaned: 'Deleted finished virtual machine: ' },
    { name: 'Failed: replaced, then deleted as finished', status: { phase: 'Failed' }, cleaned: 'Deleted finished virtual machine: ' },
    { name: 'PodTerminating: replaced, then deleted', status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', reason: 'PodTerminating' }] }, cleaned: 'Deleted finished virtual machine: ' },
    { name: 'deleting: replaced at once, not deleted again', deleting: true, cleaned: undefined },
  ];
  for (const [i, c] of cases.entries()) {
    test(c.name, async () => {
      // arrange: a replica set of 2, one of whose VMIs then leaves the count
      const name = `count-${i}`;
      const rs = await createRs(rsManifest(name, { replicas: 2 }));
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      const [gone, kept] = names(await ownedVmis(h.kube, rs.metadata?.uid));
      if (c.status) await setVmiStatus(gone!, c.status);
      if (c.deleting) {
        await h.kube.patch(VMIS, NS, gone!, { type: 'merge', body: { metadata: { finalizers: ['test/hold'] } } });
        await h.kube.delete(VMIS, NS, gone!);
      }
      server.audit.clear();
      // act
      await reconcileReplicaSet(`${NS}/${name}`, h.deps);
      // assert
      const writes = actions(server).filter((a) => !a.startsWith('event'));
      assert.equal(writes.filter((a) => a.startsWith('create virtualmachineinstances')).length, 1, `one replacement: ${writes.join(', ')}`);
      const deletes = writes.filter((a) => a.startsWith('delete virtualmachineinstances'));
      if (c.cleaned) {
        assert.deepEqual(deletes, [`delete virtualmachineinstances ${gone}`]);
        assert.ok(events(server).some((e) => e.startsWith(`Normal SuccessfulDelete: ${c.cleaned}`)));
      } else {
        assert.deepEqual(deletes, []);
      }
      assert.ok(!deletes.includes(`delete virtualmachineinstances ${kept}`));
      assert.equal((await getRs(name)).status?.replicas, 1, 'status counts only active VMIs');
      if (c.deleting) await h.kube.patch(VMIS, NS, gone!, { type: 'merge', body: { metadata: { finalizers: null } } });
    });
  }

  test('readyReplicas counts active VMIs whose Ready condition is True', async () => {
    // arrange
    const rs = await createRs(rsManifest('ready-1', { replicas: 2 }));
    await reconcileUntilSettled(server, h, `${NS}/ready-1`);
    const [a] = names(await ownedVmis(h.kube, rs.metadata?.uid));
    await setVmiStatus(a!, { phase: 'Running', conditions: READY });
    // act
    await reconcileUntilSettled(server, h, `${NS}/ready-1`);
    // assert
    const got = await getRs('ready-1');
    assert.deepEqual([got.status?.replicas, got.status?.readyReplicas], [2, 1]);
  });
});

describe('replica set reconcile against the sandbox: adoption and release', () => {
  test('an orphan matching the selector is adopted and counted; an unmatched one and another owner’s are left alone', async () => {
    // arrange
    await h.kube.create(VMIS, vmiManifest('adopt-me', { rs: 'adopt-1' }));
    await h.kube.create(VMIS, vmiManifest('not-mine', { rs: 'other' }));
    const owner = await configMapOwner('adopt-owner');
    await h.kube.create(VMIS, vmiManifest('owned-by-other', { rs: 'adopt-1' }, [{ ...owner, controller: true }]));
    const rs = await createRs(rsManifest('adopt-1', { replicas: 2 }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/adopt-1`);
    // assert
    const owned = await ownedVmis(h.kube, rs.metadata?.uid);
    assert.equal(owned.length, 2, 'the adopted VMI counts: one more is created');
    assert.ok(names(owned).includes('adopt-me'));
    const adopted = owned.find((v) => v.metadata?.name === 'adopt-me');
    assert.deepEqual(adopted?.metadata?.ownerReferences, [
      { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', name: 'adopt-1', uid: rs.metadata?.uid, controller: true, blockOwnerDeletion: true },
    ]);
    assert.equal((await h.kube.get(VMIS, NS, 'not-mine'))?.metadata?.ownerReferences, undefined);
    assert.equal((await h.kube.get(VMIS, NS, 'owned-by-other'))?.metadata?.ownerReferences?.[0]?.uid, owner.uid);
  });

  test('an owned VMI whose labels stop matching is released (our reference only; others kept) and replaced', async () => {
    // arrange
    const rs = await createRs(rsManifest('release-1', { replicas: 1 }));
    await reconcileUntilSettled(server, h, `${NS}/release-1`);
    const [vmi] = await ownedVmis(h.kube, rs.metadata?.uid);
    const other = await configMapOwner('release-owner');
    await h.kube.patch(VMIS, NS, vmi!.metadata!.name!, { type: 'merge', body: { metadata: { labels: { rs: 'elsewhere' }, ownerReferences: [...vmi!.metadata!.ownerReferences!, other] } } });
    // act
    await reconcileUntilSettled(server, h, `${NS}/release-1`);
    // assert
    const released = await h.kube.get(VMIS, NS, vmi!.metadata!.name!);
    assert.deepEqual(released?.metadata?.ownerReferences, [other]);
    const owned = await ownedVmis(h.kube, rs.metadata?.uid);
    assert.equal(owned.length, 1);
    assert.notEqual(owned[0]?.metadata?.name, vmi!.metadata!.name);
  });

  test('a replica set being deleted neither adopts nor scales', async () => {
    // arrange
    await h.kube.create(VMIS, vmiManifest('orphan-del', { rs: 'deleting-1' }));
    await createRs({ ...rsManifest('deleting-1', { replicas: 3 }), metadata: { ...rsManifest('deleting-1').metadata, finalizers: ['test/hold'] } });
    await h.kube.delete(VMI_REPLICA_SETS, NS, 'deleting-1');
    // act
    await reconcileReplicaSet(`${NS}/deleting-1`, h.deps);
    // assert
    assert.deepEqual(actions(server).filter((a) => a.includes('virtualmachineinstances ')), []);
    assert.equal((await h.kube.get(VMIS, NS, 'orphan-del'))?.metadata?.ownerReferences, undefined);
    await h.kube.patch(VMI_REPLICA_SETS, NS, 'deleting-1', { type: 'merge', body: { metadata: { finalizers: null } } });
  });
});

describe('replica set reconcile against the sandbox: paused, expectations, failures', () => {
  test('paused: no scaling, ReplicaPaused and SuccessfulPaused; resumed: condition gone, SuccessfulResumed, scaling again', async () => {
    // arrange
    const rs = await createRs(rsManifest('paused-1', { replicas: 2, paused: true }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/paused-1`);
    const paused = await getRs('paused-1');
    const pausedEvents = events(server);
    await h.kube.patch(VMI_REPLICA_SETS, NS, 'paused-1', { type: 'merge', body: { spec: { paused: false } } });
    server.audit.clear();
    await reconcileUntilSettled(server, h, `${NS}/paused-1`);
    // assert
    assert.deepEqual(
      (({ type, status, reason, message }) => ({ type, status, reason, message }))(cond(paused, 'ReplicaPaused')!),
      { type: 'ReplicaPaused', status: 'True', reason: 'Paused', message: 'Controller got paused' },
    );
    assert.deepEqual(pausedEvents, ['Normal SuccessfulPaused: Paused']);
    const resumed = await getRs('paused-1');
    assert.equal(cond(resumed, 'ReplicaPaused'), undefined);
    assert.ok(events(server).includes('Normal SuccessfulResumed: Resumed'));
    assert.equal((await ownedVmis(h.kube, rs.metadata?.uid)).length, 2);
  });

  test('unsatisfied expectations (a burst that never recorded its names) hold scaling until taken over', async () => {
    // arrange: a burst started and its worker died before recording what it created
    h = harness(server, { takeoverMs: 60_000 });
    const rs = await createRs(rsManifest('gate-1', { replicas: 2 }));
    await h.state.expectations.expectCreations(RS_EXPECTATIONS, `${NS}/gate-1`, 2, h.deps.now());
    // act
    const held = await reconcileReplicaSet(`${NS}/gate-1`, h.deps);
    const heldCount = (await ownedVmis(h.kube, rs.metadata?.uid)).length;
    h.advance(60_000);
    await reconcileUntilSettled(server, h, `${NS}/gate-1`);
    // assert
    assert.equal(held.kind, 'requeue');
    assert.equal(heldCount, 0, 'no creations while a burst may still be landing');
    assert.equal((await getRs('gate-1')).status?.labelSelector, 'rs=gate-1', 'status is still written while held');
    assert.equal((await ownedVmis(h.kube, rs.metadata?.uid)).length, 2);
  });

  test('a recorded burst settles the creation expectation on the next read; a pending deletion waits for the VMI to go', async () => {
    // arrange
    const rs = await createRs(rsManifest('gate-2', { replicas: 1 }));
    await reconcileReplicaSet(`${NS}/gate-2`, h.deps);
    const afterBurst = await h.state.expectations.get(RS_CREATED, `${NS}/gate-2`);
    // act
    await reconcileReplicaSet(`${NS}/gate-2`, h.deps);
    // assert
    const [vmi] = await ownedVmis(h.kube, rs.metadata?.uid);
    assert.deepEqual(afterBurst?.deleteKeys, [`${NS}/${vmi?.metadata?.name}`]);
    assert.equal(await h.state.expectations.get(RS_EXPECTATIONS, `${NS}/gate-2`), undefined, 'seen: the record is dropped');
    assert.equal(await h.state.expectations.get(RS_CREATED, `${NS}/gate-2`), undefined);
  });

  test('failed creations: expectation lowered, FailedCreate events, ReplicaFailure(FailedCreate) kept until a pass succeeds', async () => {
    // arrange: creates answer 500 for a while
    let failing = true;
    const inner = h.deps.kube;
    const kube = decorateKubeClient(inner as never, (method, args, call) => {
      if (failing && method === 'create' && args[0] === VMIS) return Promise.reject(new Error('500 Internal Server Error: the server is on fire'));
      return call();
    });
    h.deps = { ...h.deps, kube };
    await createRs(rsManifest('fail-1', { replicas: 2 }));
    // act
    const err = await reconcileReplicaSet(`${NS}/fail-1`, h.deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    const failed = await getRs('fail-1');
    const record = await h.state.expectations.get(RS_EXPECTATIONS, `${NS}/fail-1`);
    failing = false;
    await reconcileUntilSettled(server, h, `${NS}/fail-1`);
    // assert
    assert.ok(err instanceof Error && /on fire/.test(err.message), 'the scale error is returned for a retry');
    const c = cond(failed, 'ReplicaFailure');
    assert.equal(c?.reason, 'FailedCreate');
    assert.match(c?.message ?? '', /on fire/);
    assert.equal(record?.add, 0, 'each failed create lowers its expectation');
    assert.equal(events(server).filter((e) => e.startsWith('Warning FailedCreate: Error creating virtual machine instance: ')).length, 2);
    assert.equal(cond(await getRs('fail-1'), 'ReplicaFailure'), undefined, 'removed once a pass succeeds');
  });
});
