/**
 * The parallel limits under concurrency: 20 migrations created at once across 4 nodes, 4
 * migration workers. Checked from the API server's audit log, not from our own state: at every
 * audited write, the migrations that have a target pod and are not yet final ("running", as
 * KubeVirt counts them) are at most parallelMigrationsPerCluster (5), and at most
 * parallelOutboundMigrationsPerNode (2) of them leave any one node. A migration held back by the
 * limits is started by a wake: the relay sends it when another migration gives its slot back.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { REAL } from '../../support/lanes.ts';
import { inCommitOrder, peaksFromAudit } from '../../support/migration-peaks.ts';
import { finalMigration, migrationManifest, runningVmis, startCluster, vmiManifest, type Cluster } from './support.ts';
import { MIGRATIONS, VMIS } from '../../../shared/api/resources.ts';

let c: Cluster;

before(async () => {
  c = await startCluster({ nodes: 4, speed: 20, migrationWorkers: 4 });
});
after(async () => {
  await c.stop();
});

test('20 migrations at once on 4 nodes, 4 workers: never more than 5 running nor 2 outbound per node; all 20 complete', async () => {
  // arrange
  const names = Array.from({ length: 20 }, (_, i) => `par-${String(i).padStart(2, '0')}`);
  const nodes = await runningVmis(c, names.map((n) => vmiManifest(n)));
  const perSource = new Map<string, number>();
  for (const n of nodes.values()) perSource.set(n, (perSource.get(n) ?? 0) + 1);
  const callsBefore = c.calls.apiCalls.get('migration') ?? 0;
  const reconcilesBefore = c.calls.reconciles.get('migration') ?? 0;
  // act
  await Promise.all(names.map((n) => c.kube.create(MIGRATIONS, migrationManifest(`${n}-m`, n))));
  // 20 migrations 5 at a time: on the real lane under heavy load (load average ~30 on 2 cores) 120 s
  // was not enough for the last wave once; the limits, not the speed, are what this test checks.
  const finals = await Promise.all(names.map((n) => finalMigration(c, `${n}-m`, REAL ? 300_000 : 120_000)));
  // assert
  // The emulator's audit log is in commit order by construction; the real one is not.
  const entries = c.sandbox.apiServer.audit.query();
  const peaks = peaksFromAudit(REAL ? inCommitOrder(entries) : entries);
  const calls = (c.calls.apiCalls.get('migration') ?? 0) - callsBefore;
  const reconciles = (c.calls.reconciles.get('migration') ?? 0) - reconcilesBefore;
  // A target pod created by a pass that another migration's event caused: the relay's wake.
  const uidOf = new Map(finals.map((m) => [`default/${m.metadata?.name ?? ''}`, m.metadata?.uid ?? '']));
  const uids = new Set(uidOf.values());
  const woken = c.calls.podCreations.filter((p) => p.cause.startsWith('VirtualMachineInstanceMigration/') && p.causeUid !== uidOf.get(p.key) && uids.has(p.causeUid));
  process.stdout.write(`# target pods created by a wake from another migration's finish: ${woken.length}; by cause: ${JSON.stringify(Object.fromEntries(Object.entries(Object.groupBy(c.calls.podCreations, (p) => (p.causeUid === uidOf.get(p.key) ? 'own ' : '') + p.cause)).map(([k, v]) => [k, v?.length])))}\n`);
  process.stdout.write(`# sources per node ${JSON.stringify(Object.fromEntries(perSource))}; peak running ${peaks.cluster}, peak outbound ${peaks.perNode} (${peaks.perNodeAt}); target pods ${peaks.started}; migration reconciles ${reconciles}, API calls ${calls} (${(calls / 20).toFixed(1)} per migration)\n`);
  // A renewal refused after a lease lapsed under a slow reconcile: the fence must have held anyway.
  for (const w of c.calls.warnings.filter((x) => /lease/i.test(x))) process.stdout.write(`# ${w}\n`);
  assert.deepEqual(finals.map((m) => m.status?.phase), names.map(() => 'Succeeded'), 'all 20 complete');
  assert.ok(peaks.cluster <= 5, `at most 5 running at any instant, saw ${peaks.cluster} (${peaks.runningAtPeak.join(', ')} at ${peaks.peakAt})`);
  assert.ok(peaks.perNode <= 2, `at most 2 outbound from one node at any instant, saw ${peaks.perNode} on ${peaks.perNodeAt}`);
  assert.ok(peaks.cluster >= 2, `migrations did run in parallel (peak ${peaks.cluster}), so the limits were exercised`);
  assert.equal(peaks.started, 20, 'one target pod per migration');
  // Only 5 can start at first; the rest wait for slots, and a freed slot wakes who waits.
  assert.ok(woken.length > 0, 'no waiting migration was started by the wake of a finishing one');
  for (const [name, source] of nodes) {
    const vmi = await c.kube.get(VMIS, 'default', name);
    assert.notEqual(vmi?.status?.nodeName, source, `${name} moved off ${source}`);
  }
});
