/**
 * The pool reconcile against the sandbox API server: updates (opportunistic VM update, proactive
 * VMI restarts within maxUnavailable and the 3-second requeue, VM deletion for DataVolume
 * changes, relabelling), revision pruning, autohealing, pause, release, deletion and the
 * ReplicaFailure condition (reference §2.5–§2.9). The test plays the VM controller and
 * virt-handler: it creates VMIs for the pool's VMs and writes their status.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachinePoolSpec } from '../../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, VM_POOLS, VMIS, VMS } from '../../../shared/api/resources.ts';
import { reconcilePool } from '../../../functions/pool/reconcile.ts';
import { POOL_FINALIZER, REVISION_LABEL } from '../../../functions/pool/well-known.ts';
import { NS, poolManifest } from './fixtures.ts';
import { actions, CONTROLLER, harness, objectActions, reconcileUntilSettled, type Harness } from './support.ts';

let server: ApiServer;
let h: Harness;

before(async () => {
  server = await startApiServer({ port: 0, tooLargeWaitMs: 50 });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  h = harness(server);
  server.audit.clear();
  server.faults.clear();
});

const READY = [{ type: 'Ready', status: 'True' }];

/** Plays the VM controller and virt-handler: each VM of the pool gets a Running, Ready VMI from its template, and a Ready VM status. */
async function runVms(pool: string): Promise<void> {
  for (const vm of (await h.kube.list(VMS, NS)).items.filter((v) => v.metadata?.name?.startsWith(`${pool}-`))) {
    const name = vm.metadata?.name ?? '';
    if (!(await h.kube.get(VMIS, NS, name))) {
      const vmi: VirtualMachineInstance = {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstance',
        metadata: { name, namespace: NS, labels: vm.spec.template.metadata?.labels ?? {}, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name, uid: vm.metadata?.uid ?? '', controller: true }] },
        spec: vm.spec.template.spec!,
      };
      await h.kube.create(VMIS, vmi);
    }
    await h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status: { phase: 'Running', conditions: READY } } });
    await h.kube.patch(VMS, NS, name, { type: 'merge', body: { status: { conditions: READY, printableStatus: 'Running' } } }, { subresource: 'status' });
  }
}

async function createRunningPool(name: string, spec: Partial<VirtualMachinePoolSpec>): Promise<void> {
  await h.kube.create(VM_POOLS, poolManifest(name, spec));
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
  await runVms(name);
  await reconcileUntilSettled(server, h, `${NS}/${name}`);
}

/** A template change: a new container disk image (a VMI template change). */
async function changeImage(name: string, image: string): Promise<void> {
  const pool = await h.kube.get(VM_POOLS, NS, name);
  const t = structuredClone(pool!.spec.virtualMachineTemplate);
  t.spec!.template.spec!.volumes = [{ name: 'root', containerDisk: { image } }];
  await h.kube.patch(VM_POOLS, NS, name, { type: 'merge', body: { spec: { virtualMachineTemplate: t } } });
}

const vmiImage = async (name: string) => (await h.kube.get(VMIS, NS, name))?.spec.volumes?.[0]?.containerDisk?.image;

describe('pool reconcile: update', () => {
  test('opportunistic: outdated VMs are re-rendered at the new revision; their VMIs are left alone', async () => {
    // arrange
    await createRunningPool('opu', { replicas: 2, updateStrategy: { opportunistic: {} } });
    await changeImage('opu', 'img:2');
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/opu`);
    // assert
    const writes = objectActions(server);
    assert.deepEqual(writes.slice(0, 3), ['create controllerrevisions opu-2', 'update virtualmachines opu-0', 'update virtualmachines opu-1']);
    assert.ok(!writes.some((w) => w.includes('virtualmachineinstances')), writes.join('\n'));
    const vm = await h.kube.get(VMS, NS, 'opu-0');
    assert.equal(vm?.metadata?.labels?.[REVISION_LABEL], 'opu-2');
    assert.equal(vm?.spec.template.spec?.volumes?.[0]?.containerDisk?.image, 'img:2');
    assert.notEqual(await vmiImage('opu-0'), 'img:2');
  });

  test('proactive, maxUnavailable 1: one VMI restarted per pass, requeue in 3 s while the budget is spent', async () => {
    // arrange
    await createRunningPool('pro', { replicas: 3, maxUnavailable: 1, updateStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder' } } } });
    await changeImage('pro', 'img:2');
    await reconcilePool(`${NS}/pro`, h.deps); // the VMs are re-rendered
    server.audit.clear();
    // act
    const first = await reconcilePool(`${NS}/pro`, h.deps);
    const restartedFirst = objectActions(server).filter((a) => a.startsWith('delete virtualmachineinstances'));
    server.audit.clear();
    const waiting = await reconcilePool(`${NS}/pro`, h.deps); // pro-0 has no VMI yet: unavailable
    const whileWaiting = objectActions(server).filter((a) => a.startsWith('delete'));
    await runVms('pro'); // the VM controller re-creates pro-0 from the new template
    server.audit.clear();
    await reconcilePool(`${NS}/pro`, h.deps);
    const restartedNext = objectActions(server).filter((a) => a.startsWith('delete virtualmachineinstances'));
    // assert
    assert.deepEqual(restartedFirst, ['delete virtualmachineinstances pro-0']);
    assert.deepEqual(first, { kind: 'requeue', afterSeconds: 3, why: 'unavailability budget exhausted' });
    assert.deepEqual(whileWaiting, []);
    assert.equal(waiting.kind, 'requeue');
    assert.equal(await vmiImage('pro-0'), 'img:2');
    assert.deepEqual(restartedNext, ['delete virtualmachineinstances pro-1']);
  });

  test('a rollout runs to the end: every VMI on the new image, the old revision pruned', async () => {
    // arrange
    await createRunningPool('roll', { replicas: 2, maxUnavailable: '50%' });
    await changeImage('roll', 'img:2');
    // act: reconcile, playing the VM controller between passes
    for (let i = 0; i < 8; i++) {
      await reconcilePool(`${NS}/roll`, h.deps);
      await runVms('roll');
    }
    await reconcileUntilSettled(server, h, `${NS}/roll`);
    // assert
    assert.deepEqual([await vmiImage('roll-0'), await vmiImage('roll-1')], ['img:2', 'img:2']);
    const revs = (await h.kube.list(CONTROLLER_REVISIONS, NS)).items.map((r) => r.metadata?.name).filter((n) => n?.startsWith('roll-'));
    assert.deepEqual(revs, ['roll-2']);
  });

  test('DataVolume templates changed: the VM itself is deleted (foreground) and re-created', async () => {
    // arrange
    await createRunningPool('dvc', { replicas: 1 });
    const pool = await h.kube.get(VM_POOLS, NS, 'dvc');
    const t = structuredClone(pool!.spec.virtualMachineTemplate);
    t.spec!.dataVolumeTemplates = [{ metadata: { name: 'extra' }, spec: { storage: {} } } as never];
    await h.kube.patch(VM_POOLS, NS, 'dvc', { type: 'merge', body: { spec: { virtualMachineTemplate: t } } });
    await reconcilePool(`${NS}/dvc`, h.deps);
    server.audit.clear();
    // act
    await reconcilePool(`${NS}/dvc`, h.deps);
    // assert
    assert.deepEqual(objectActions(server).filter((a) => a.startsWith('delete')), ['delete virtualmachines dvc-0']);
    const del = server.audit.query({ identity: CONTROLLER, verb: 'delete', name: 'dvc-0' })[0];
    assert.ok(del?.object.metadata.finalizers?.includes('foregroundDeletion'), 'propagationPolicy Foreground');
  });

  test('only the VM labels changed: the VMI is relabelled, not restarted', async () => {
    // arrange
    await createRunningPool('lbl', { replicas: 1 });
    const pool = await h.kube.get(VM_POOLS, NS, 'lbl');
    const t = structuredClone(pool!.spec.virtualMachineTemplate);
    t.metadata = { ...t.metadata, labels: { ...t.metadata?.labels, tier: 'gold' } };
    await h.kube.patch(VM_POOLS, NS, 'lbl', { type: 'merge', body: { spec: { virtualMachineTemplate: t } } });
    await reconcilePool(`${NS}/lbl`, h.deps);
    const uid = (await h.kube.get(VMIS, NS, 'lbl-0'))?.metadata?.uid;
    server.audit.clear();
    // act
    await reconcilePool(`${NS}/lbl`, h.deps);
    // assert
    assert.deepEqual(actions(server).slice(0, 2), ['patch virtualmachineinstances lbl-0', 'event SuccessfulDelete']);
    const vmi = await h.kube.get(VMIS, NS, 'lbl-0');
    assert.equal(vmi?.metadata?.uid, uid, 'the same VMI');
    assert.equal(vmi?.metadata?.labels?.[REVISION_LABEL], 'lbl-2');
  });

  test('unmanaged updates: nothing is touched', async () => {
    // arrange
    await createRunningPool('unm', { replicas: 1, updateStrategy: { unmanaged: {} } });
    await changeImage('unm', 'img:2');
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/unm`);
    // assert
    assert.deepEqual(objectActions(server).filter((a) => !a.includes('controllerrevisions')), []);
  });
});

describe('pool reconcile: autohealing, pause, release, deletion, failures', () => {
  test('autohealing: a VM that failed to start 3 times is deleted and then replaced', async () => {
    // arrange
    await createRunningPool('heal', { replicas: 1, autohealing: {} });
    await h.kube.patch(VMS, NS, 'heal-0', { type: 'merge', body: { status: { startFailure: { consecutiveFailCount: 3 } } } }, { subresource: 'status' });
    const uid = (await h.kube.get(VMS, NS, 'heal-0'))?.metadata?.uid;
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/heal`);
    // assert
    assert.deepEqual(objectActions(server).slice(0, 2), ['delete virtualmachines heal-0', 'patch virtualmachines heal-0']);
    const vm = await h.kube.get(VMS, NS, 'heal-0');
    assert.ok(vm && vm.metadata?.uid !== uid, 'a new heal-0 replaces the failing one');
  });

  test('autohealing leaves VMs the pool does not own alone (upstream deletes any VM of the namespace, Q-P2)', async () => {
    // arrange
    const stranger: VirtualMachine = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'stranger', namespace: NS }, spec: { template: {} } };
    await h.kube.create(VMS, stranger);
    await h.kube.patch(VMS, NS, 'stranger', { type: 'merge', body: { status: { startFailure: { consecutiveFailCount: 9 } } } }, { subresource: 'status' });
    await h.kube.create(VM_POOLS, poolManifest('heal2', { replicas: 0, autohealing: {} }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/heal2`);
    // assert
    assert.ok(await h.kube.get(VMS, NS, 'stranger'));
  });

  test('paused: the finalizer still goes on, no VM is created, ReplicaPaused; unpaused: removed, scaled', async () => {
    // arrange
    await h.kube.create(VM_POOLS, poolManifest('pz', { replicas: 1, paused: true }));
    // act
    await reconcileUntilSettled(server, h, `${NS}/pz`);
    const paused = await h.kube.get(VM_POOLS, NS, 'pz');
    const pausedActions = actions(server);
    await h.kube.patch(VM_POOLS, NS, 'pz', { type: 'merge', body: { spec: { paused: false } } });
    server.audit.clear();
    await reconcileUntilSettled(server, h, `${NS}/pz`);
    // assert
    assert.deepEqual(pausedActions, ['patch virtualmachinepools pz', 'event SuccessfulPaused', 'update virtualmachinepools/status pz']);
    assert.deepEqual(paused?.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message]), [['ReplicaPaused', 'True', 'SuccessfulPaused', 'Pool controller is paused']]);
    assert.ok(actions(server).includes('event SuccessfulResume'));
    assert.equal((await h.kube.get(VM_POOLS, NS, 'pz'))?.status?.conditions, undefined);
    assert.ok(await h.kube.get(VMS, NS, 'pz-0'));
  });

  test('a VM relabelled out of the selector is released: only the pool reference and finalizer go', async () => {
    // arrange
    await createRunningPool('rel', { replicas: 1 });
    await h.kube.patch(VMS, NS, 'rel-0', { type: 'json', ops: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/keep' }, { op: 'replace', path: '/metadata/labels/app', value: 'elsewhere' }] });
    server.audit.clear();
    // act
    await reconcilePool(`${NS}/rel`, h.deps);
    // assert
    const vm = await h.kube.get(VMS, NS, 'rel-0');
    assert.deepEqual(vm?.metadata?.finalizers, ['example.com/keep'], 'another controller’s finalizer survives (upstream’s patch is invalid JSON here, Q-P4)');
    assert.deepEqual(vm?.metadata?.ownerReferences ?? [], []);
    assert.deepEqual(objectActions(server).slice(0, 2), ['patch virtualmachines rel-0', 'create virtualmachines rel-1']);
  });

  test('the pool finalizer is added next to others (upstream replaces the list, Q-P5)', async () => {
    // arrange
    const m = poolManifest('fin', { replicas: 0 });
    m.metadata = { ...m.metadata, finalizers: ['example.com/other'] };
    await h.kube.create(VM_POOLS, m);
    // act
    await reconcileUntilSettled(server, h, `${NS}/fin`);
    // assert
    assert.deepEqual((await h.kube.get(VM_POOLS, NS, 'fin'))?.metadata?.finalizers, ['example.com/other', POOL_FINALIZER]);
  });

  test('deletion: the finalizer comes off the selected VMs and then the pool; revisions pruned; the pool goes', async () => {
    // arrange
    await createRunningPool('gone', { replicas: 2 });
    await h.kube.delete(VM_POOLS, NS, 'gone');
    server.audit.clear();
    // act
    const outcome = await reconcilePool(`${NS}/gone`, h.deps);
    // assert
    assert.deepEqual(objectActions(server), ['patch virtualmachines gone-0', 'patch virtualmachines gone-1', 'patch virtualmachinepools gone']);
    assert.equal(outcome.kind, 'done');
    assert.equal(await h.kube.get(VM_POOLS, NS, 'gone'), undefined);
    for (const n of ['gone-0', 'gone-1']) assert.ok(!(await h.kube.get(VMS, NS, n))?.metadata?.finalizers?.includes(POOL_FINALIZER));
  });

  test('a failed scale-out: FailedCreate event, ReplicaFailure condition, a retry; cleared by the next clean pass', async () => {
    // arrange
    await h.kube.create(VM_POOLS, poolManifest('fail', { replicas: 1 }));
    server.faults.failNext(500, 1, { verb: 'create', resource: 'virtualmachines', identity: CONTROLLER });
    // act
    const failed = await reconcilePool(`${NS}/fail`, h.deps).then(() => 'done', (e: Error) => e.message);
    const condition = (await h.kube.get(VM_POOLS, NS, 'fail'))?.status?.conditions?.[0];
    await reconcileUntilSettled(server, h, `${NS}/fail`);
    // assert
    assert.match(failed, /^error during scale out: /);
    assert.deepEqual([condition?.type, condition?.status, condition?.reason], ['ReplicaFailure', 'True', 'FailedScaleOut']);
    assert.ok(actions(server).includes('event FailedCreate') && actions(server).includes('event FailedScaleOut'));
    assert.equal((await h.kube.get(VM_POOLS, NS, 'fail'))?.status?.conditions, undefined);
    assert.ok(await h.kube.get(VMS, NS, 'fail-0'));
  });

  test('a selector that does not match the template: nothing is done', async () => {
    // arrange
    await h.kube.create(VM_POOLS, poolManifest('badsel', { replicas: 1, selector: { matchLabels: { app: 'other' } } }));
    // act
    const outcome = await reconcilePool(`${NS}/badsel`, h.deps);
    // assert
    assert.deepEqual([outcome.kind, actions(server)], ['done', []]);
  });

  test('the pool is gone: its expectations are dropped', async () => {
    // arrange
    await h.state.expectations.expectDeletions('pool-vm-deletions', `${NS}/nope`, ['x'], h.deps.now());
    // act
    await reconcilePool(`${NS}/nope`, h.deps);
    // assert
    assert.equal(await h.state.expectations.get('pool-vm-deletions', `${NS}/nope`), undefined);
  });
});
