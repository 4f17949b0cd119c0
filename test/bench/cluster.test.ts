/**
 * The benchmarks' cluster in a child process (test/bench/support/cluster.ts): the same view as a
 * sandbox in this process — kubeconfigs per identity, the sandbox clock, milestones from the audit
 * log, counters, a CPU profile — and nothing left running after stop().
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { VMIS } from '../../shared/api/resources.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { startCluster, startClusterProcess } from './support/cluster.ts';
import type { Milestone } from './support/milestones.ts';
import { USER_IDENTITY, vmiManifest, waitUntil } from './support/vmi-run.ts';

test('a cluster in a child process: kubeconfigs, clock, milestones, counters, profile, clean stop', async () => {
  // arrange
  const cluster = await startClusterProcess({ vmis: 10, identities: [USER_IDENTITY] });
  const seen: Milestone[] = [];
  const unsubscribe = cluster.onMilestone((m) => seen.push(m));
  try {
    // act
    await cluster.profile?.start();
    const before = cluster.nowMs();
    await createKubeClient(cluster.kubeConfig(USER_IDENTITY)).create(VMIS, vmiManifest('child-1') as unknown as VirtualMachineInstance);
    const gotIt = await waitUntil(() => seen.some((m) => m.kind === 'vmi' && m.name === 'child-1' && m.verb === 'create'), 10_000);
    const counters = await cluster.counters();
    const cpu = await cluster.profile?.stop();
    const rss = await cluster.rssBytes?.();

    // assert
    assert.equal(cluster.placement, 'child process');
    assert.deepEqual(cluster.nodeNames, ['node01', 'node02']);
    assert.ok(gotIt, 'the VMI create reached the parent as a milestone');
    const m = seen.find((x) => x.kind === 'vmi' && x.name === 'child-1')!;
    // The child's clock, read here through one offset, agrees with when the create was sent.
    assert.ok(m.time >= before - 50 && m.time <= cluster.nowMs() + 50, `milestone at ${m.time}, sent at ${before}`);
    assert.ok(counters.some((c) => c.identity === USER_IDENTITY && c.verb === 'create' && c.resource === 'virtualmachineinstances' && c.count === 1));
    assert.ok(cpu && cpu.sampledSeconds > 0);
    assert.ok(rss && rss > 10 * 2 ** 20);
    assert.throws(() => cluster.kubeConfig('nobody'), /no kubeconfig for identity nobody/);
  } finally {
    unsubscribe();
    await cluster.stop();
  }
  // A stopped cluster answers no more: the process is gone.
  await assert.rejects(cluster.counters(), /exited/);
});

test('BENCH_SANDBOX names where the cluster runs; a wrong value is a clear error', async () => {
  // arrange
  const saved = process.env.BENCH_SANDBOX;
  process.env.BENCH_SANDBOX = 'elsewhere';
  try {
    // act / assert
    await assert.rejects(startCluster({ vmis: 1, identities: [] }), /BENCH_SANDBOX=elsewhere: expected child or inprocess/);
  } finally {
    if (saved === undefined) delete process.env.BENCH_SANDBOX;
    else process.env.BENCH_SANDBOX = saved;
  }
});

test("a child cluster started from sandbox options serves the emulator's fault hooks and drains its audit log", async () => {
  // arrange
  const cluster = await startClusterProcess({ vmis: 0, identities: [USER_IDENTITY], options: { nodes: 1, storage: true, controlPlane: 'emulator' } });
  const kube = createKubeClient(cluster.kubeConfig(USER_IDENTITY));
  try {
    // act
    await kube.create(VMIS, vmiManifest('apart-1') as unknown as VirtualMachineInstance);
    const logged = await cluster.drainAudit();
    const drainedAgain = await cluster.drainAudit();
    await cluster.faults.failNext(500, 2, { identity: USER_IDENTITY, verb: 'get' });
    const pending = await cluster.faults.remaining();
    const refused = await kube.get(VMIS, 'default', 'apart-1').then(() => undefined, (err: unknown) => (err as { status?: number }).status);
    await cluster.faults.clear();
    const afterClear = await cluster.faults.remaining();
    const read = await kube.get(VMIS, 'default', 'apart-1');
    await cluster.faults.compactHistory();
    await cluster.faults.dropWatches();

    // assert
    assert.deepEqual(cluster.nodeNames, ['node01']);
    assert.match(cluster.virtApiUrl ?? '', /^https?:\/\/127\.0\.0\.1:\d+/, 'the storage side\'s virt-api server is named');
    assert.ok(logged.some((e) => e.verb === 'create' && e.resource === 'virtualmachineinstances' && e.name === 'apart-1'), 'the create is in the drained log');
    assert.equal(drainedAgain.filter((e) => e.name === 'apart-1' && e.verb === 'create').length, 0, 'a drained entry is not drained twice');
    assert.equal(pending, 2);
    assert.equal(refused, 500);
    assert.equal(afterClear, 0);
    assert.equal(read?.metadata?.name, 'apart-1');
  } finally {
    await cluster.stop();
  }
});
