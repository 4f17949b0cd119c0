import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { PDBS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';
import { PDB_EXPECTATIONS, type DisruptionBudgetDeps } from '../../../functions/disruption-budget/deps.ts';
import { reconcileDisruptionBudget } from '../../../functions/disruption-budget/reconcile.ts';
import { disruptionBudgetMapper } from '../../../functions/disruption-budget/wakes.ts';
import { describeMapperCases, type MapperCase } from '../../support/mapper-cases.ts';

const CONTROLLER = 'disruption-budget-controller';
const NOW = Date.parse('2026-12-01T12:00:00Z');
let server: ApiServer;
let kube: KubeClient;
let state: SqliteStateStore;
let deps: DisruptionBudgetDeps;

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  kube = createKubeClient(server.kubeConfig('test'));
  state = openSqliteState();
  deps = { kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(NOW) }), expectations: state.expectations, now: () => NOW, log: { info: () => undefined, warn: () => undefined } };
});
afterEach(async () => {
  await server.close();
});

type Owner = { kind: string; name: string; uid?: string; controller?: boolean };

/** A PDB as KubeVirt before v1.6.0 made them (or any other shape: the shape does not matter). */
async function pdb(name: string, owner: Owner | undefined, extra: Partial<V1PodDisruptionBudget['spec']> = {}, labels?: Record<string, string>): Promise<void> {
  await kube.create(PDBS, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name,
      namespace: 'default',
      ...(labels ? { labels } : {}),
      ...(owner ? { ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: owner.kind, name: owner.name, uid: owner.uid ?? `uid-${owner.name}`, controller: owner.controller ?? true }] } : {}),
    },
    spec: { minAvailable: 1, selector: { matchLabels: { 'kubevirt.io/created-by': owner?.uid ?? 'x' } }, ...extra },
  } as V1PodDisruptionBudget);
}

async function pdbNames(): Promise<string[]> {
  return (await kube.list(PDBS, 'default')).items.map((p) => p.metadata?.name ?? '').sort();
}

function events(): string[] {
  return server.audit.query({ identity: CONTROLLER, resource: 'events' }).map((e) => {
    const ev = e.object as { type?: string; reason?: string; message?: string; involvedObject?: { name?: string; uid?: string } };
    return `${ev.type} ${ev.reason} ${ev.involvedObject?.name}${ev.involvedObject?.uid ? '' : ' (stub)'}: ${ev.message}`;
  });
}

/** Creates the VMI; answers its UID (owner references must name a live owner, or the GC collects the PDB). */
async function vmi(name: string): Promise<string> {
  const made = await kube.create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' }, spec: { domain: { devices: {} } } } as VirtualMachineInstance);
  return made.metadata?.uid ?? '';
}

describe('disruption-budget reconcile against the sandbox API server', () => {
  const shapes: [string, Partial<V1PodDisruptionBudget['spec']>, Record<string, string> | undefined][] = [
    ['the per-VMI kubevirt-disruption-budget- PDB (minAvailable 1)', {}, undefined],
    ['one grown to 2 during a migration, with the migrationName label', { minAvailable: 2 }, { 'kubevirt.io/migrationName': 'm1' }],
    ['any other shape (maxUnavailable, odd selector)', { minAvailable: undefined, maxUnavailable: 0, selector: { matchLabels: { app: 'x' } } }, undefined],
  ];
  for (const [name, spec, labels] of shapes) {
    test(`deleted, whatever its shape: ${name}`, async () => {
      // arrange
      const uid = await vmi('vm-a');
      await pdb('kubevirt-disruption-budget-abc', { kind: 'VirtualMachineInstance', name: 'vm-a', uid }, spec, labels);
      // act
      const outcome = await reconcileDisruptionBudget('default/vm-a', deps);
      // assert
      assert.deepEqual(outcome, { kind: 'done' });
      assert.deepEqual(await pdbNames(), []);
      assert.deepEqual(events(), ['Normal SuccessfulDelete vm-a: Deleted PodDisruptionBudget kubevirt-disruption-budget-abc']);
    });
  }

  test('only PDBs whose controller owner is this VMI; another VMI\'s, a non-controller reference and an ownerless PDB are left', async () => {
    // arrange (owner name vs UID, other kinds and the stub event subject: decisions.test.ts; on a
    // cluster the garbage collector removes a PDB whose owner UID no longer exists)
    const b = await vmi('vm-b');
    const c = await vmi('vm-c');
    await pdb('kubevirt-migration-pdb-old', { kind: 'VirtualMachineInstance', name: 'vm-b', uid: b });
    await pdb('not-controller', { kind: 'VirtualMachineInstance', name: 'vm-b', uid: b, controller: false });
    await pdb('other-vmi', { kind: 'VirtualMachineInstance', name: 'vm-c', uid: c });
    await pdb('no-owner', undefined);
    // act
    await reconcileDisruptionBudget('default/vm-b', deps);
    // assert
    assert.deepEqual(await pdbNames(), ['no-owner', 'not-controller', 'other-vmi']);
    assert.deepEqual(events(), ['Normal SuccessfulDelete vm-b: Deleted PodDisruptionBudget kubevirt-migration-pdb-old']);
  });

  test('several PDBs: all deleted one after another; only the last is tracked, and the next pass that has one to delete observes it gone', async () => {
    // arrange
    const uid = await vmi('vm-d');
    for (const n of ['p1', 'p2', 'p3']) await pdb(n, { kind: 'VirtualMachineInstance', name: 'vm-d', uid });
    // act
    await reconcileDisruptionBudget('default/vm-d', deps);
    const record = await state.expectations.get(PDB_EXPECTATIONS, 'default/vm-d');
    const again = await reconcileDisruptionBudget('default/vm-d', deps);
    const untouched = await state.expectations.get(PDB_EXPECTATIONS, 'default/vm-d');
    await pdb('p4', { kind: 'VirtualMachineInstance', name: 'vm-d', uid });
    const later = await reconcileDisruptionBudget('default/vm-d', deps);
    // assert
    assert.deepEqual(await pdbNames(), []);
    assert.equal(events().length, 4);
    assert.equal(record?.deleteKeys.length, 1, 'ExpectDeletions overwrites');
    assert.deepEqual(again, { kind: 'done' });
    assert.deepEqual(untouched, record, 'a pass with nothing to delete reads and lowers no record');
    assert.deepEqual(later, { kind: 'done' }, 'the tracked PDB is gone: observed, p4 deleted');
    assert.deepEqual((await state.expectations.get(PDB_EXPECTATIONS, 'default/vm-d'))?.deleteKeys, ['default/p4']);
  });

  test('a failed delete: FailedDelete, the next PDB still goes, the pass fails with the last error', async () => {
    // arrange
    const uid = await vmi('vm-e');
    await pdb('e1', { kind: 'VirtualMachineInstance', name: 'vm-e', uid });
    await pdb('e2', { kind: 'VirtualMachineInstance', name: 'vm-e', uid });
    server.faults.failNext(500, 1, { verb: 'delete', resource: 'poddisruptionbudgets', identity: CONTROLLER });
    // act
    const err = await reconcileDisruptionBudget('default/vm-e', deps).then(() => undefined, (e: unknown) => e as Error);
    // assert
    assert.match(err?.message ?? '', /^Error deleting the PodDisruptionBudget e1: /);
    assert.deepEqual(await pdbNames(), ['e1']);
    assert.match(events()[0] ?? '', /^Warning FailedDelete vm-e: Error deleting the PodDisruptionBudget e1: /);
    assert.equal(events()[1], 'Normal SuccessfulDelete vm-e: Deleted PodDisruptionBudget e2');
    // act: the retry deletes the rest
    await reconcileDisruptionBudget('default/vm-e', deps);
    assert.deepEqual(await pdbNames(), []);
  });

  test('a tracked deletion not yet observed (the PDB still there, not terminating): the key waits, nothing is deleted', async () => {
    // arrange
    const uid = await vmi('vm-f');
    await pdb('stuck', { kind: 'VirtualMachineInstance', name: 'vm-f', uid });
    await state.expectations.expectDeletions(PDB_EXPECTATIONS, 'default/vm-f', ['default/stuck'], NOW - 60_000);
    // act
    const outcome = await reconcileDisruptionBudget('default/vm-f', deps);
    // assert
    assert.equal(outcome.kind, 'requeue');
    assert.deepEqual(await pdbNames(), ['stuck']);
  });
});

describe('disruption-budget relay mapping', () => {
  const vmiOwned = (name: string, owner: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, namespace: 'ns', ownerReferences: [{ kind: 'VirtualMachineInstance', name: owner, controller: true }], ...extra } });
  const vmiA = { metadata: { name: 'a', namespace: 'ns' } };
  const podA = vmiOwned('virt-launcher-a', 'a');
  const migA = { metadata: { name: 'm', namespace: 'ns' }, spec: { vmiName: 'a' } };
  /** Events fed in order to one mapper; the keys the last one wakes. */
  const cases: MapperCase[] = [
    ['PDB add owned by a VMI', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')]], ['ns/a']],
    ['PDB owner changed: old and new owner', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['PodDisruptionBudget', 'MODIFIED', vmiOwned('p', 'b'), vmiOwned('p', 'a')]], ['ns/a', 'ns/b']],
    ['PDB delete', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['PodDisruptionBudget', 'DELETED', vmiOwned('p', 'a')]], ['ns/a']],
    ['PDB of a Deployment', [['PodDisruptionBudget', 'ADDED', { metadata: { name: 'p', namespace: 'ns', ownerReferences: [{ kind: 'Deployment', name: 'a', controller: true }] } }]], []],
    // With a PDB of the VMI known, every trigger of §4.1 wakes it.
    ['VMI add, its PDB known', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['VirtualMachineInstance', 'ADDED', vmiA]], ['ns/a']],
    ['VMI delete, its PDB known', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['VirtualMachineInstance', 'DELETED', vmiA]], ['ns/a']],
    ['pod update, its PDB known', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['Pod', 'MODIFIED', podA]], ['ns/a']],
    ['migration update, its PDB known', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['VirtualMachineInstanceMigration', 'MODIFIED', migA]], ['ns/a']],
    ['a terminating PDB still counts (its delete event wakes the key again)', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a', { deletionTimestamp: 'x' })], ['Pod', 'MODIFIED', podA]], ['ns/a']],
    // Without one, the reconcile would find nothing to delete: no wake.
    ['VMI add, no PDB of it', [['VirtualMachineInstance', 'ADDED', vmiA]], []],
    ['pod update, no PDB of it', [['Pod', 'MODIFIED', podA]], []],
    ['migration update, no PDB of it', [['VirtualMachineInstanceMigration', 'MODIFIED', migA]], []],
    ['the PDB of another VMI name', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'b')], ['VirtualMachineInstance', 'MODIFIED', vmiA]], []],
    ['its PDB deleted since', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['PodDisruptionBudget', 'DELETED', vmiOwned('p', 'a')], ['VirtualMachineInstance', 'MODIFIED', vmiA]], []],
    ['its PDB moved to another owner since', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['PodDisruptionBudget', 'MODIFIED', vmiOwned('p', 'b'), vmiOwned('p', 'a')], ['VirtualMachineInstance', 'MODIFIED', vmiA]], []],
    ['pod add is ignored', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['Pod', 'ADDED', podA]], []],
    ['deleting pod is ignored', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['Pod', 'MODIFIED', vmiOwned('virt-launcher-a', 'a', { deletionTimestamp: 'x' })]], []],
    ['migration add is ignored', [['PodDisruptionBudget', 'ADDED', vmiOwned('p', 'a')], ['VirtualMachineInstanceMigration', 'ADDED', migA]], []],
  ];
  describeMapperCases('events in order', 'disruption-budget', () => disruptionBudgetMapper(), cases);
});
