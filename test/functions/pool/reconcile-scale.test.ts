/**
 * The pool reconcile against the sandbox API server: scale out and in, names, revisions,
 * finalizers, release, pause, state preservation, autohealing, deletion and status (reference §2).
 * The test plays the VM controller where a pass needs one (VM status, VMIs).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachinePoolSpec } from '../../../shared/api/index.ts';
import { CONTROLLER_REVISIONS, DATA_VOLUMES, PVCS, VM_POOLS, VMS } from '../../../shared/api/resources.ts';
import { POOL_FINALIZER, REVISION_LABEL } from '../../../functions/pool/well-known.ts';
import { NS, poolManifest } from './fixtures.ts';
import { actions, harness, objectActions, reconcileUntilSettled, type Harness } from './support.ts';

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

async function createPool(name: string, spec: Partial<VirtualMachinePoolSpec> = {}) {
  return h.kube.create(VM_POOLS, poolManifest(name, spec));
}

async function vmNames(pool: string): Promise<string[]> {
  const vms = await h.kube.list(VMS, NS);
  return vms.items
    .filter((vm) => vm.metadata?.ownerReferences?.some((r) => r.name === pool))
    .map((vm) => vm.metadata?.name ?? '')
    .sort();
}

async function setReplicas(name: string, replicas: number) {
  await h.kube.patch(VM_POOLS, NS, name, { type: 'merge', body: { spec: { replicas } } });
}

describe('pool reconcile: scale', () => {
  test('scale out from nothing: finalizer, the revision, VMs <pool>-0…, status; the next pass writes nothing', async () => {
    // arrange
    const pool = await createPool('out', { replicas: 2 });
    // act
    const settled = await reconcileUntilSettled(server, h, `${NS}/out`);
    // assert
    assert.deepEqual(actions(server), [
      'patch virtualmachinepools out',
      'create controllerrevisions out-1',
      'create virtualmachines out-0',
      'create virtualmachines out-1',
      'event SuccessfulCreate',
      'event SuccessfulCreate',
      'update virtualmachinepools/status out', // counts are from the read at the start of the pass: 0 VMs
      'update virtualmachinepools/status out', // the next pass sees both VMs
    ]);
    assert.equal(settled.passes, 3);
    const vm = await h.kube.get(VMS, NS, 'out-0');
    assert.deepEqual(vm?.metadata?.finalizers, [POOL_FINALIZER]);
    assert.equal(vm?.metadata?.labels?.[REVISION_LABEL], 'out-1');
    assert.equal(vm?.spec.template.metadata?.labels?.[REVISION_LABEL], 'out-1');
    assert.deepEqual(vm?.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['VirtualMachinePool', pool.metadata?.uid, true]]);
    const written = await h.kube.get(VM_POOLS, NS, 'out');
    assert.deepEqual(written?.metadata?.finalizers, [POOL_FINALIZER]);
    assert.deepEqual([written?.status?.replicas, written?.status?.readyReplicas, written?.status?.labelSelector], [2, 0, 'app=out']);
    const rev = await h.kube.get(CONTROLLER_REVISIONS, NS, 'out-1');
    assert.equal(rev?.metadata?.ownerReferences?.[0]?.uid, pool.metadata?.uid);
  });

  test('names fill gaps and skip names any VM holds (an orphan is never adopted)', async () => {
    // arrange: an orphan VM already named gap-1
    await h.kube.create(VMS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'gap-1', namespace: NS, labels: { app: 'gap' } }, spec: { template: {} } });
    await createPool('gap', { replicas: 3 });
    // act
    await reconcileUntilSettled(server, h, `${NS}/gap`);
    // assert
    assert.deepEqual(await vmNames('gap'), ['gap-0', 'gap-2', 'gap-3']);
    assert.equal((await h.kube.get(VMS, NS, 'gap-1'))?.metadata?.ownerReferences, undefined, 'the orphan stays an orphan');
  });

  const policies: Array<{ sort: string; want: string[] }> = [
    { sort: 'DescendingOrder', want: ['desc-0', 'desc-1'] },
    { sort: 'AscendingOrder', want: ['desc-2', 'desc-3'] },
  ];
  for (const p of policies) {
    test(`proactive scale-in, ${p.sort}: the policy picks, the pool finalizer comes off, the VMs go`, async () => {
      // arrange
      const name = 'desc';
      await createPool(name, { replicas: 4, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: p.sort } } } });
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      await setReplicas(name, 2);
      server.audit.clear();
      // act
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      // assert
      assert.deepEqual(await vmNames(name), p.want);
      const writes = objectActions(server);
      assert.equal(writes.filter((a) => a.startsWith('delete virtualmachines')).length, 2, writes.join('\n'));
      // clean up for the next case
      await h.kube.delete(VM_POOLS, NS, name);
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      for (const vm of await vmNames(name)) await h.kube.delete(VMS, NS, vm);
    });
  }

  test('scale-in selectors: only matching VMs are candidates; with fewer than asked, what is available', async () => {
    // arrange: 3 VMs; mark only sel-2's VMI template as a spare
    await createPool('sel', { replicas: 3, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'AscendingOrder', selectors: { labelSelector: { matchLabels: { spare: 'yes' } } } } } } });
    await reconcileUntilSettled(server, h, `${NS}/sel`);
    await h.kube.patch(VMS, NS, 'sel-2', { type: 'merge', body: { spec: { template: { metadata: { labels: { spare: 'yes' } } } } } });
    await h.kube.patch(VM_POOLS, NS, 'sel', { type: 'merge', body: { spec: { replicas: 1, updateStrategy: { unmanaged: {} } } } });
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/sel`);
    // assert: upstream would panic here (Q-P6)
    assert.deepEqual(await vmNames('sel'), ['sel-0', 'sel-1']);
  });

  const leftAlone: Array<{ name: string; strategy: VirtualMachinePoolSpec['scaleInStrategy'] }> = [
    { name: 'unmanaged', strategy: { unmanaged: {} } },
    { name: 'opportunistic', strategy: { opportunistic: {} } },
  ];
  for (const c of leftAlone) {
    test(`${c.name} scale-in leaves extra VMs alone`, async () => {
      // arrange
      const name = `alone-${c.name}`;
      await createPool(name, { replicas: 2, scaleInStrategy: c.strategy });
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      await setReplicas(name, 1);
      server.audit.clear();
      // act
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      // assert
      assert.deepEqual(await vmNames(name), [`${name}-0`, `${name}-1`]);
      assert.deepEqual(objectActions(server).filter((a) => a.startsWith('delete')), []);
    });
  }

  test('opportunistic scale-in: a VM deleted by hand loses the pool finalizer and goes; replicas follow', async () => {
    // arrange
    await createPool('opp', { replicas: 2, scaleInStrategy: { opportunistic: { statePreservation: 'Disabled' } } });
    await reconcileUntilSettled(server, h, `${NS}/opp`);
    await setReplicas('opp', 1);
    await h.kube.delete(VMS, NS, 'opp-1');
    assert.ok((await h.kube.get(VMS, NS, 'opp-1'))?.metadata?.deletionTimestamp, 'held by the pool finalizer');
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/opp`);
    // assert
    assert.equal(await h.kube.get(VMS, NS, 'opp-1'), undefined);
    assert.deepEqual(objectActions(server), ['patch virtualmachines opp-1', 'update virtualmachinepools/status opp']);
    assert.equal((await h.kube.get(VM_POOLS, NS, 'opp'))?.status?.replicas, 1);
  });

  test('a deleting VM counts: the pool waits for it to go before replacing it (no second VM)', async () => {
    // arrange: another finalizer keeps wait-0 around after the pool lets it go
    await createPool('wait', { replicas: 1 });
    await reconcileUntilSettled(server, h, `${NS}/wait`);
    await h.kube.patch(VMS, NS, 'wait-0', { type: 'json', ops: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/hold' }] });
    await h.kube.delete(VMS, NS, 'wait-0');
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/wait`);
    const whileDeleting = await vmNames('wait');
    await h.kube.patch(VMS, NS, 'wait-0', { type: 'merge', body: { metadata: { finalizers: null } } });
    await reconcileUntilSettled(server, h, `${NS}/wait`);
    // assert
    assert.deepEqual(whileDeleting, ['wait-0']);
    assert.deepEqual(await vmNames('wait'), ['wait-0'], 'replaced under the same (lowest free) name');
    assert.equal((await h.kube.get(VMS, NS, 'wait-0'))?.metadata?.deletionTimestamp, undefined);
    assert.deepEqual((await h.kube.get(VMS, NS, 'wait-0'))?.metadata?.finalizers, [POOL_FINALIZER]);
  });

  test('state preservation Offline: the DataVolume and PVC outlive the VM and a re-created VM reuses them', async () => {
    // arrange: a pool with a DataVolume template; play CDI/VM controller by creating the owned DV and PVC
    const spec = poolManifest('sp').spec;
    spec.virtualMachineTemplate.spec!.dataVolumeTemplates = [{ metadata: { name: 'disk' }, spec: { storage: { resources: { requests: { storage: '1Gi' } } } } } as never];
    spec.virtualMachineTemplate.spec!.template.spec!.volumes = [{ name: 'root', dataVolume: { name: 'disk' } }];
    await createPool('sp', { ...spec, replicas: 1, scaleInStrategy: { proactive: { statePreservation: 'Offline' } } });
    await reconcileUntilSettled(server, h, `${NS}/sp`);
    const vm = await h.kube.get(VMS, NS, 'sp-0');
    assert.equal(vm?.spec.dataVolumeTemplates?.[0]?.metadata?.name, 'disk-0', 'DataVolume names are indexed');
    const owner = [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'sp-0', uid: vm?.metadata?.uid ?? '', controller: true }];
    await h.kube.create(DATA_VOLUMES, { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'disk-0', namespace: NS, ownerReferences: owner }, spec: {} } as never);
    await h.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'disk-0', namespace: NS, ownerReferences: owner }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await setReplicas('sp', 0);
    server.audit.clear();
    // act
    await reconcileUntilSettled(server, h, `${NS}/sp`);
    // assert
    assert.deepEqual(objectActions(server).slice(0, 4), ['delete virtualmachines sp-0', 'patch persistentvolumeclaims disk-0', 'patch datavolumes disk-0', 'patch virtualmachines sp-0']);
    assert.equal(await h.kube.get(VMS, NS, 'sp-0'), undefined);
    assert.deepEqual((await h.kube.get(PVCS, NS, 'disk-0'))?.metadata?.ownerReferences ?? [], []);
    assert.deepEqual((await h.kube.get(DATA_VOLUMES, NS, 'disk-0'))?.metadata?.ownerReferences ?? [], []);
    // and a scale-out at the same index names the same DataVolume
    await setReplicas('sp', 1);
    await reconcileUntilSettled(server, h, `${NS}/sp`);
    assert.equal((await h.kube.get(VMS, NS, 'sp-0'))?.spec.template.spec?.volumes?.[0]?.dataVolume?.name, 'disk-0');
  });
});
