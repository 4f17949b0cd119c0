/**
 * The pool's expectations against the sandbox API server: a pass whose read does not show a VM
 * it expects (created, or deleted) waits instead of acting again, lowers what its reads show,
 * and takes over a record whose write never happened once `takeoverMs` has passed.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { VM_POOLS, VMS } from '../../../shared/api/resources.ts';
import { CREATION_EXPECTATIONS, DELETION_EXPECTATIONS } from '../../../functions/pool/deps.ts';
import { reconcilePool } from '../../../functions/pool/reconcile.ts';
import { NS, poolManifest } from './fixtures.ts';
import { harness, objectActions, reconcileUntilSettled, type Harness } from './support.ts';

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
});

describe('pool reconcile: expectations', () => {
  const cases: Array<{ name: string; advanceMs: number; wantCreated: boolean; wantOutcome: string }> = [
    { name: 'a creation recorded and not yet seen: no second scale-out, wait', advanceMs: 0, wantCreated: false, wantOutcome: 'requeue' },
    { name: 'past takeoverMs (the recording worker crashed before its write): taken over, scaled', advanceMs: 5 * 60 * 1000 + 1, wantCreated: true, wantOutcome: 'done' },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      // arrange: a pending creation of exp-0 that never reached the API server
      const name = `exp${c.advanceMs}`;
      await h.kube.create(VM_POOLS, poolManifest(name, { replicas: 1 }));
      await h.state.expectations.expectDeletions(CREATION_EXPECTATIONS, `${NS}/${name}`, [`${NS}/${name}-0`], h.deps.now());
      h.advance(c.advanceMs);
      // act
      const outcome = await reconcilePool(`${NS}/${name}`, h.deps);
      // assert
      assert.equal(outcome.kind, c.wantOutcome);
      assert.equal((await h.kube.get(VMS, NS, `${name}-0`)) !== undefined, c.wantCreated);
      assert.ok(!objectActions(server).some((a) => a.startsWith('create virtualmachines')) || c.wantCreated);
    });
  }

  test('creations are lowered once a read lists the VMs; deletions once the VM is terminating', async () => {
    // arrange
    await h.kube.create(VM_POOLS, poolManifest('low', { replicas: 2, scaleInStrategy: { proactive: { selectionPolicy: { sortPolicy: 'DescendingOrder' } } } }));
    await reconcilePool(`${NS}/low`, h.deps);
    const afterCreate = await h.state.expectations.get(CREATION_EXPECTATIONS, `${NS}/low`);
    await reconcilePool(`${NS}/low`, h.deps);
    const lowered = await h.state.expectations.satisfied(CREATION_EXPECTATIONS, `${NS}/low`, h.deps.now());
    // hold low-1 after its pool finalizer goes, so it stays terminating
    await h.kube.patch(VMS, NS, 'low-1', { type: 'json', ops: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/hold' }] });
    await h.kube.patch(VM_POOLS, NS, 'low', { type: 'merge', body: { spec: { replicas: 1 } } });
    // act
    await reconcilePool(`${NS}/low`, h.deps);
    const afterDelete = await h.state.expectations.get(DELETION_EXPECTATIONS, `${NS}/low`);
    await reconcileUntilSettled(server, h, `${NS}/low`);
    // assert
    assert.deepEqual([...(afterCreate?.deleteKeys ?? [])].sort(), [`${NS}/low-0`, `${NS}/low-1`], 'both creations recorded before the writes');
    assert.equal(lowered, true);
    assert.equal(afterDelete?.deleteKeys.length, 1);
    assert.equal(await h.state.expectations.satisfied(DELETION_EXPECTATIONS, `${NS}/low`, h.deps.now()), true, 'a terminating VM counts as deleted');
    assert.deepEqual(objectActions(server).filter((a) => a.startsWith('delete virtualmachines')), ['delete virtualmachines low-1'], 'exactly one deletion, never a second VM');
    assert.ok((await h.kube.get(VMS, NS, 'low-1'))?.metadata?.deletionTimestamp);
  });

  const races: Array<{ name: string; from: number; to: number }> = [
    { name: 'two passes racing a scale-in under the Random policy delete exactly the excess', from: 4, to: 2 },
    { name: 'two passes racing a scale-out create exactly the missing VMs, without an error', from: 0, to: 3 },
  ];
  for (const c of races) {
    test(c.name, async () => {
      // arrange: the same pool, two workers with different random draws (a redelivery mid-pass)
      const name = `race${c.from}${c.to}`;
      await h.kube.create(VM_POOLS, poolManifest(name, { replicas: c.from }));
      await reconcileUntilSettled(server, h, `${NS}/${name}`);
      await h.kube.patch(VM_POOLS, NS, name, { type: 'merge', body: { spec: { replicas: c.to } } });
      // Both passes get through the expectations gate before either acts: the race a
      // redelivery mid-pass makes, which the gate alone cannot see.
      let arrived = 0;
      let release!: () => void;
      const bothThrough = new Promise<void>((r) => (release = r));
      const base = h.deps.expectations;
      // The gate reads the deletion record once a pass (shared/reconcile/expectations-gate.ts).
      const expectations = {
        ...base,
        get: async (scope: string, key: string) => {
          const r = await base.get(scope, key);
          if (scope === DELETION_EXPECTATIONS) {
            if (++arrived === 2) release();
            await bothThrough;
          }
          return r;
        },
      };
      const a = { ...h.deps, expectations, random: () => 0 };
      const b = { ...h.deps, expectations, random: () => 0.99 };
      server.audit.clear();
      // act
      const outcomes = await Promise.allSettled([reconcilePool(`${NS}/${name}`, a), reconcilePool(`${NS}/${name}`, b)]);
      // assert
      assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled']);
      const writes = objectActions(server);
      const live = (await h.kube.list(VMS, NS)).items.filter((vm) => vm.metadata?.name?.startsWith(`${name}-`) && !vm.metadata.deletionTimestamp);
      assert.equal(live.length, c.to, writes.join('\n'));
      if (c.from > c.to) assert.equal(writes.filter((w) => w.startsWith('delete virtualmachines')).length, c.from - c.to);
    });
  }
});
