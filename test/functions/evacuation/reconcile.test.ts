import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { MIGRATIONS, NODES, PODS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { EVACUATION_EXPECTATIONS, type EvacuationDeps } from '../../../functions/evacuation/deps.ts';
import { reconcileEvacuation } from '../../../functions/evacuation/reconcile.ts';

const CONTROLLER = 'evacuation-controller';
const NOW = Date.parse('2026-12-01T12:00:00Z');
let server: ApiServer;
let kube: KubeClient;
let state: SqliteStateStore;

function deps(clusterStrategy?: string): EvacuationDeps {
  const config = { ...clusterConfigFromKubeVirt(undefined), evictionStrategy: clusterStrategy };
  return {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(NOW) }),
    expectations: state.expectations,
    clusterConfig: async () => config,
    now: () => NOW,
    log: { info: () => undefined, warn: () => undefined },
  };
}

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  kube = createKubeClient(server.kubeConfig('test'));
  state = openSqliteState();
});
afterEach(async () => {
  await server.close();
});

const MIGRATABLE = [{ type: 'LiveMigratable', status: 'True' }];

interface VmiOpts {
  strategy?: string;
  marked?: string;
  migratable?: boolean;
  phase?: string;
  annotations?: Record<string, string>;
  migrationState?: Record<string, unknown>;
  nodeName?: string;
}

async function vmi(name: string, o: VmiOpts = {}): Promise<VirtualMachineInstance> {
  await kube.create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default', labels: { 'kubevirt.io/nodeName': o.nodeName ?? 'node01' }, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: { domain: { devices: {} }, ...(o.strategy ? { evictionStrategy: o.strategy } : {}) },
  } as VirtualMachineInstance);
  const status = {
    phase: o.phase ?? 'Running',
    nodeName: o.nodeName ?? 'node01',
    ...(o.marked ? { evacuationNodeName: o.marked } : {}),
    ...(o.migratable === false ? {} : { conditions: MIGRATABLE }),
    ...(o.migrationState ? { migrationState: o.migrationState } : {}),
  };
  return kube.patch(VMIS, 'default', name, { type: 'merge', body: { status } });
}

async function node(name: string, taints: V1Node['spec'] = {}): Promise<void> {
  await kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: taints } as V1Node);
}

async function launcher(v: VirtualMachineInstance, suffix: string, phase = 'Running'): Promise<void> {
  const name = `virt-launcher-${v.metadata?.name}-${suffix}`;
  await kube.create(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: v.metadata?.name ?? '', uid: v.metadata?.uid ?? '', controller: true }] },
    spec: { nodeName: 'node01', containers: [{ name: 'compute', image: 'l' }] },
  } as V1Pod);
  await kube.patch(PODS, 'default', name, { type: 'merge', body: { status: { phase } } }, { subresource: 'status' });
}

async function migrations(): Promise<VirtualMachineInstanceMigration[]> {
  return (await kube.list(MIGRATIONS, 'default')).items;
}

function events(): string[] {
  return server.audit.query({ identity: CONTROLLER, resource: 'events' }).map((e) => {
    const ev = e.object as { type?: string; reason?: string; message?: string; involvedObject?: { name?: string } };
    return `${ev.type} ${ev.reason} ${ev.involvedObject?.name}: ${ev.message}`;
  });
}

describe('evacuation reconcile against the sandbox API server', () => {
  test('marked VMIs on the node get one kubevirt-evacuation- migration each, at once, annotated with the node', async () => {
    // arrange
    await node('node01');
    for (const n of ['a', 'b', 'c']) await vmi(n, { strategy: 'LiveMigrate', marked: 'node01' });
    // act
    const outcome = await reconcileEvacuation('node01', deps());
    // assert
    const made = await migrations();
    assert.deepEqual(made.map((m) => m.spec?.vmiName).sort(), ['a', 'b', 'c'], 'no per-node or per-cluster cap here');
    for (const m of made) {
      assert.match(m.metadata?.name ?? '', /^kubevirt-evacuation-/);
      assert.deepEqual(m.metadata?.annotations, { 'kubevirt.io/evacuationMigration': 'node01' });
      assert.equal(m.metadata?.labels, undefined);
      assert.equal(m.spec?.priority, 'system-critical');
    }
    assert.deepEqual(events().map((e) => e.replace(/kubevirt-evacuation-\w+/, 'M')).sort(), ['a', 'b', 'c'].map((n) => `Normal SuccessfulCreate ${n}: Created Migration M`));
    assert.deepEqual(outcome, { kind: 'done' });
    assert.equal(await state.expectations.satisfied(EVACUATION_EXPECTATIONS, 'node01', NOW), true);
    // act again: the unfinished migrations hold every VMI back
    await reconcileEvacuation('node01', deps());
    assert.equal((await migrations()).length, 3);
  });

  test('the descheduler asked: priority system-maintenance', async () => {
    // arrange
    await node('node01');
    await vmi('d', { strategy: 'LiveMigrate', marked: 'node01', annotations: { 'kubevirt.io/eviction-source': 'descheduler' } });
    // act
    await reconcileEvacuation('node01', deps());
    // assert
    assert.deepEqual((await migrations()).map((m) => m.spec?.priority), ['system-maintenance']);
  });

  const skipped: [string, VmiOpts, string | undefined][] = [
    ['eviction strategy None', { strategy: 'None', marked: 'node01' }, undefined],
    ['no strategy and the cluster default None', { marked: 'node01' }, undefined],
    ['External (virt-api marks it, nobody here migrates it)', { strategy: 'External', marked: 'node01' }, undefined],
    ['LiveMigrateIfPossible, not migratable', { strategy: 'LiveMigrateIfPossible', marked: 'node01', migratable: false }, undefined],
    ['LiveMigrate but not LiveMigratable (no event either)', { strategy: 'LiveMigrate', marked: 'node01', migratable: false }, undefined],
    ['final (Succeeded)', { strategy: 'LiveMigrate', marked: 'node01', phase: 'Succeeded' }, undefined],
    ['not marked, node not tainted', { strategy: 'LiveMigrate' }, undefined],
    ['marked for another node (already moved)', { strategy: 'LiveMigrate', marked: 'node02' }, undefined],
    ['marked and migrating', { strategy: 'LiveMigrate', marked: 'node01', migrationState: { startTimestamp: '2026-12-01T11:59:00Z' } }, undefined],
  ];
  for (const [name, opts, cluster] of skipped) {
    test(`no migration: ${name}`, async () => {
      // arrange
      await node('node01');
      await vmi('x', opts);
      // act
      await reconcileEvacuation('node01', deps(cluster));
      // assert
      assert.deepEqual(await migrations(), []);
      assert.deepEqual(events(), []);
    });
  }

  test('the cluster strategy applies to a VMI without one; a migration that ended (endTimestamp passed) no longer blocks', async () => {
    // arrange
    await node('node01');
    await vmi('c', { marked: 'node01', migrationState: { startTimestamp: '2026-12-01T11:00:00Z', endTimestamp: '2026-12-01T11:10:00Z' } });
    // act
    await reconcileEvacuation('node01', deps('LiveMigrate'));
    // assert
    assert.deepEqual((await migrations()).map((m) => m.spec?.vmiName), ['c']);
  });

  test('the drain taint (kubevirt.io/drain NoSchedule, any value): every VMI on the node, marked or not', async () => {
    // arrange
    await node('node01', { taints: [{ key: 'kubevirt.io/drain', value: 'draining', effect: 'NoSchedule' }] });
    await vmi('t1', { strategy: 'LiveMigrate' });
    await vmi('t2', { strategy: 'LiveMigrate', marked: 'node01' });
    await vmi('t3', { strategy: 'None' });
    await vmi('elsewhere', { strategy: 'LiveMigrate', nodeName: 'node02' });
    // act
    await reconcileEvacuation('node01', deps());
    // assert
    assert.deepEqual((await migrations()).map((m) => m.spec?.vmiName).sort(), ['t1', 't2']);
  });

  test('a NoExecute drain taint does not count', async () => {
    // arrange
    await node('node01', { taints: [{ key: 'kubevirt.io/drain', effect: 'NoExecute' }] });
    await vmi('t1', { strategy: 'LiveMigrate' });
    // act
    await reconcileEvacuation('node01', deps());
    // assert
    assert.deepEqual(await migrations(), []);
  });

  test('an unfinished migration of the VMI (whoever made it) or two live pods hold it back; a finished one does not', async () => {
    // arrange
    await node('node01');
    await vmi('has-mig', { strategy: 'LiveMigrate', marked: 'node01' });
    await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'by-hand', namespace: 'default' }, spec: { vmiName: 'has-mig' } } as VirtualMachineInstanceMigration);
    const twoPods = await vmi('two-pods', { strategy: 'LiveMigrate', marked: 'node01' });
    await launcher(twoPods, 'src');
    await launcher(twoPods, 'dst', 'Pending');
    const oldPod = await vmi('old-pod', { strategy: 'LiveMigrate', marked: 'node01' });
    await launcher(oldPod, 'src');
    await launcher(oldPod, 'gone', 'Succeeded');
    await vmi('old-mig', { strategy: 'LiveMigrate', marked: 'node01' });
    await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'failed-before', namespace: 'default' }, spec: { vmiName: 'old-mig' } } as VirtualMachineInstanceMigration);
    await kube.patch(MIGRATIONS, 'default', 'failed-before', { type: 'merge', body: { status: { phase: 'Failed' } } }, { subresource: 'status' });
    // act
    await reconcileEvacuation('node01', deps());
    // assert
    const byVmi = (await migrations()).filter((m) => m.metadata?.annotations?.['kubevirt.io/evacuationMigration']).map((m) => m.spec?.vmiName).sort();
    assert.deepEqual(byVmi, ['old-mig', 'old-pod']);
  });

  test('a failed create: FailedCreate on the VMI, the pass fails (retry), the record is lowered', async () => {
    // arrange
    await node('node01');
    await vmi('f', { strategy: 'LiveMigrate', marked: 'node01' });
    server.faults.failNext(500, 1, { verb: 'create', resource: 'virtualmachineinstancemigrations', identity: CONTROLLER });
    // act
    const err = await reconcileEvacuation('node01', deps()).then(() => undefined, (e: unknown) => e as Error);
    // assert
    assert.match(err?.message ?? '', /^Error creating a Migration: /);
    assert.match(events()[0] ?? '', /^Warning FailedCreate f: Error creating a Migration: /);
    assert.equal(await state.expectations.satisfied(EVACUATION_EXPECTATIONS, 'node01', NOW), true);
    // act: the retry creates it
    await reconcileEvacuation('node01', deps());
    assert.equal((await migrations()).length, 1);
  });

  test('expectations not satisfied (a pass died mid-way): nothing is created until the record expires', async () => {
    // arrange
    await node('node01');
    await vmi('e', { strategy: 'LiveMigrate', marked: 'node01' });
    await state.expectations.expectCreations(EVACUATION_EXPECTATIONS, 'node01', 2, NOW - 60_000);
    // act
    const outcome = await reconcileEvacuation('node01', deps());
    // assert
    assert.deepEqual(await migrations(), []);
    assert.equal(outcome.kind, 'requeue');
    assert.ok(outcome.kind === 'requeue' && Math.abs(outcome.afterSeconds - 240) < 1, JSON.stringify(outcome));
  });

  test('the node is gone: its expectations are dropped, nothing else', async () => {
    // arrange
    await state.expectations.expectCreations(EVACUATION_EXPECTATIONS, 'node09', 1, NOW);
    await vmi('orphan', { strategy: 'LiveMigrate', marked: 'node09', nodeName: 'node09' });
    // act
    const outcome = await reconcileEvacuation('node09', deps());
    // assert
    assert.deepEqual(outcome, { kind: 'done' });
    assert.equal(await state.expectations.get(EVACUATION_EXPECTATIONS, 'node09'), undefined);
    assert.deepEqual(await migrations(), []);
  });
});
