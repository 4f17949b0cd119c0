/**
 * The replica set under the chaos suite's faults, small enough for CI: see
 * run-replicaset-chaos.ts for what is injected and checked. `npm run chaos` runs a larger one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApiServer } from '../../sandbox/apiserver/index.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { VMI_REPLICA_SETS, VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { checkAudit, ReplicaSetWithinSpec, replicaSetChaosViolations, runReplicaSetChaos } from './run-replicaset-chaos.ts';

test('a replica set scaled up and down under worker kills, duplicate deliveries ×5, 409/429/500 and dropped watches: never more live VMIs than spec.replicas, and exactly spec.replicas after each step', async () => {
  // arrange + act
  const report = await runReplicaSetChaos({ steps: [6, 15, 4, 10], handDeletes: 2, stepTimeoutMs: 120_000 });
  // assert
  assert.ok(report.injected.workerKills! > 0, `no worker was killed (seed ${report.seed}): the run proved nothing`);
  assert.ok(report.injected.duplicateDeliveries! > 0, `no duplicate delivery (seed ${report.seed})`);
  assert.deepEqual(replicaSetChaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});

test('seed 303 (regression): a view whose pods lagged its VMI showed a Scheduled VMI beside an unbound pod, and the pass failed the VMI; such a view no longer goes out', async () => {
  // arrange + act: the seed that found it (functions/relay/view-store.ts `consistent`, docs/scale.md)
  const report = await runReplicaSetChaos({ steps: [6, 15, 4, 10], handDeletes: 2, stepTimeoutMs: 120_000, seed: 303 });
  // assert
  assert.deepEqual(replicaSetChaosViolations(report), [], `seed ${report.seed}; injected ${JSON.stringify(report.injected)}`);
});

test('the audit check itself: a VMI joining beyond spec.replicas is reported', async () => {
  // arrange: a replica set of 1 and VMIs made by hand under it
  const server = await startApiServer({ port: 0 });
  try {
    const kube = createKubeClient(server.kubeConfig('test'));
    const rs = await kube.create(VMI_REPLICA_SETS, { metadata: { name: 'audit-rs', namespace: 'default' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } } } } as VirtualMachineInstanceReplicaSet);
    const owned = (name: string) => ({ metadata: { name, namespace: 'default', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', name: 'audit-rs', uid: rs.metadata!.uid!, controller: true }] }, spec: { domain: { devices: {} } } }) as VirtualMachineInstance;
    await kube.create(VMIS, owned('one'));
    const clean = checkAudit(server.audit, 'audit-rs');
    const firstBatchEntries = server.audit.query();
    // The soak's way: replayed in batches, each dropped once read.
    const streaming = new ReplicaSetWithinSpec('audit-rs');
    const firstBatch = streaming.feed(server.audit.query());
    server.audit.clear();
    await kube.create(VMIS, owned('two'));
    // act
    const over = checkAudit({ query: () => [...firstBatchEntries, ...server.audit.query()] }, 'audit-rs');
    const secondBatch = streaming.feed(server.audit.query());
    // assert
    assert.deepEqual(clean.overshoots, []);
    assert.deepEqual(firstBatch, []);
    assert.deepEqual(secondBatch, over.overshoots, 'the batches find what the whole log does');
    assert.equal(over.overshoots.length, 1);
    assert.match(over.overshoots[0] ?? '', /create two by test .*: 2 active \(one -, two -\), spec.replicas 1/);
    assert.equal(over.maxExcess, 1);
    // the writes that led to it stay readable after the log is dropped
    assert.equal(streaming.trails.length, 1);
    assert.match(streaming.trails[0]!.join('\n'), /rs audit-rs by test: spec.replicas 1, .*\n.*vmi one by test: - \(not active\)|vmi one by test: -; 1 active/);
    assert.match(streaming.trails[0]!.at(-1) ?? '', /create vmi two by test: -; 2 active/);
    // KubeVirt's replica set replaces a finished VMI before deleting it: a Failed one beside its replacement is no overshoot
    await kube.delete(VMIS, 'default', 'two');
    await kube.update(VMIS, { ...(await kube.get(VMIS, 'default', 'one'))!, status: { phase: 'Failed' } } as VirtualMachineInstance);
    const replaced = new ReplicaSetWithinSpec('audit-rs');
    replaced.feed([...firstBatchEntries, ...server.audit.query()]);
    server.audit.clear();
    await kube.create(VMIS, owned('three'));
    assert.deepEqual(replaced.feed(server.audit.query()), [], 'a Failed VMI and its replacement');
    await kube.create(VMIS, owned('four'));
    assert.equal(replaced.feed(server.audit.query()).length, 1, 'a second active one is an overshoot');
  } finally {
    await server.close();
  }
});
