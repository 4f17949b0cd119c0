/**
 * The VMI controller's pod expectations gate the pod writes only (KubeVirt's `needsSync`): a pass
 * that decides to create or delete no pod reads no record, and one that does is held off by an
 * unsatisfied record until a read shows what it waits for. Against the sandbox API server (no
 * simulated nodes), with the embedded state store; every expectations call is counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { POD_EXPECTATIONS, type VmiDeps } from '../../../functions/vmi/deps.ts';
import { podExpectationsKey, reconcileVmi } from '../../../functions/vmi/reconcile.ts';
import { CREATED_BY_LABEL } from '../../../shared/api/well-known.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { silentLogger } from '../../../shared/metrics/log.ts';
import type { Expectations } from '../../../shared/state/port.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { NS, vmiManifest } from '../../e2e/support.ts';

let server: ApiServer;
before(async () => {
  server = await startApiServer({ port: 0 });
});
after(async () => {
  await server.close();
});

/** The state store's expectations with every call counted by name. */
function counted(e: Expectations): { expectations: Expectations; calls: string[] } {
  const calls: string[] = [];
  const expectations = new Proxy(e, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { expectations, calls };
}

function setUp(): { deps: VmiDeps; calls: string[]; kube: KubeClient } {
  const state = openSqliteState();
  const { expectations, calls } = counted(state.expectations);
  const config = clusterConfigFromKubeVirt(undefined);
  const deps: VmiDeps = { kube: createKubeClient(server.kubeConfig('vmi-controller')), expectations, leases: state.leases, clusterConfig: async () => config, now: () => Date.now(), log: silentLogger };
  return { deps, calls, kube: createKubeClient(server.kubeConfig('test')) };
}

async function podsOf(kube: KubeClient, uid: string): Promise<string[]> {
  return (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${uid}` })).items.map((p) => p.metadata?.name ?? '');
}

describe('VMI pod expectations gate only the pod writes', () => {
  test('the creating pass records and reads; the status passes after it touch no record', async () => {
    // arrange
    const { deps, calls, kube } = setUp();
    const vmi = await kube.create(VMIS, vmiManifest('gate-status'));
    const key = `${NS}/gate-status`;
    // act
    await reconcileVmi(key, deps);
    const creating = calls.splice(0);
    await reconcileVmi(key, deps);
    await reconcileVmi(key, deps);
    const statusPasses = calls.splice(0);
    // assert
    assert.deepEqual(creating, ['get', 'tryExpectCreations'], 'the creating pass: the gate read, the record before the create');
    assert.deepEqual(statusPasses, [], 'a pass that writes no pod reads no expectation');
    assert.equal((await podsOf(kube, vmi.metadata?.uid ?? '')).length, 1);
    assert.equal((await kube.get(VMIS, NS, 'gate-status'))?.status?.phase, 'Scheduling');
  });

  test('an unsatisfied record and no pod in any read: no second pod, the key waits for the takeover', async () => {
    // arrange: another worker recorded its create and its pod is not visible (it died, or it is
    // still in flight)
    const { deps, calls, kube } = setUp();
    const vmi = await kube.create(VMIS, vmiManifest('gate-held'));
    const key = `${NS}/gate-held`;
    await deps.expectations.tryExpectCreations(POD_EXPECTATIONS, podExpectationsKey(key, vmi), 1, deps.now());
    calls.splice(0);
    // act
    const outcome = await reconcileVmi(key, deps);
    // assert
    assert.equal(outcome.kind, 'requeue');
    assert.deepEqual(await podsOf(kube, vmi.metadata?.uid ?? ''), [], 'no pod created past the record');
    assert.ok(calls.includes('get'), 'the create decision read the record');
    assert.equal(calls.includes('tryExpectCreations'), false);
  });

  test('a creation first seen by a status pass is lowered by the next pass that writes pods (the delete)', async () => {
    // arrange
    const { deps, calls, kube } = setUp();
    const vmi = await kube.create(VMIS, vmiManifest('gate-delete'));
    const key = `${NS}/gate-delete`;
    await reconcileVmi(key, deps); // creates the pod, records add=1
    await reconcileVmi(key, deps); // sees it: a status pass, the record is left as it is
    const left = await deps.expectations.get(POD_EXPECTATIONS, podExpectationsKey(key, vmi));
    calls.splice(0);
    // act: the VMI goes (a finalizer keeps it, so the pass sees it deleting with its pod)
    await kube.patch(VMIS, NS, 'gate-delete', { type: 'merge', body: { metadata: { finalizers: ['test/keep'] } } });
    await kube.delete(VMIS, NS, 'gate-delete');
    await reconcileVmi(key, deps);
    // assert
    assert.equal(left?.add, 1, 'the status pass did not lower it');
    assert.ok(calls.includes('creationObserved'), `the deleting pass lowered it first: ${calls.join(', ')}`);
    assert.ok(calls.includes('expectDeletions'), 'then recorded its delete');
    const pods = await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${vmi.metadata?.uid ?? ''}` });
    assert.ok(pods.items.every((p) => p.metadata?.deletionTimestamp) || pods.items.length === 0, 'the launcher pod is going');
  });

  test('a satisfied record and a read older than the pod it saw: one quorum read, no second pod', async () => {
    // arrange: the pod was created and a pass saw it (record satisfied); this pass's read predates
    // it (a racing or old delivery): its first pod list is answered empty
    const { deps, kube } = setUp();
    const vmi = await kube.create(VMIS, vmiManifest('gate-stale'));
    const key = `${NS}/gate-stale`;
    const ekey = podExpectationsKey(key, vmi);
    await reconcileVmi(key, deps);
    await deps.expectations.creationObserved(POD_EXPECTATIONS, ekey);
    // …and the VMI read is as old: still Pending (a Scheduling VMI without its pod would be failed instead)
    await kube.patch(VMIS, NS, 'gate-stale', { type: 'merge', body: { status: { phase: 'Pending' } } });
    assert.equal((await deps.expectations.satisfied(POD_EXPECTATIONS, ekey, deps.now())), true);
    let lists = 0;
    const stale = new Proxy(deps.kube, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'list' || typeof v !== 'function') return v;
        return async (...args: unknown[]) => {
          const out = (await (v as (...a: unknown[]) => Promise<{ items: unknown[] }>).apply(target, args));
          return (args[0] as { plural: string }).plural === 'pods' && lists++ === 0 ? { ...out, items: [] } : out;
        };
      },
    });
    // act
    await reconcileVmi(key, { ...deps, kube: stale });
    // assert
    assert.equal(lists, 2, 'the create decision re-read the pods from etcd');
    assert.equal((await podsOf(kube, vmi.metadata?.uid ?? '')).length, 1, 'no second launcher pod');
  });

  test('a VMI re-created under the same name (a VM restart) gets its pod at once: the old one\'s unlowered record is its own', async () => {
    // arrange: the first VMI got its pod, seen only by status passes (its record never lowered)
    const { deps, kube } = setUp();
    const key = `${NS}/gate-again`;
    const first = await kube.create(VMIS, vmiManifest('gate-again'));
    await reconcileVmi(key, deps);
    await reconcileVmi(key, deps);
    await kube.delete(VMIS, NS, 'gate-again');
    // act: the next VMI of that name, before any pass saw the first one gone
    const second = await kube.create(VMIS, vmiManifest('gate-again'));
    const outcome = await reconcileVmi(key, deps);
    // assert
    assert.notEqual(outcome.kind, 'requeue', 'not held by the first VMI\'s record');
    assert.equal((await podsOf(kube, second.metadata?.uid ?? '')).length, 1, 'the new VMI has its launcher pod');
    assert.equal((await deps.expectations.get(POD_EXPECTATIONS, podExpectationsKey(key, first)))?.add, 1, 'the old record is left to expire');
  });
});
