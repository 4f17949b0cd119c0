/**
 * A node drain of N LiveMigrate VMIs (BENCH_DRAIN_VMIS, default 50; 10 with BENCH_QUICK=1) on a
 * fresh sandbox in a child process (support/cluster.ts), through the serverless path (relay →
 * SQLite queue → evacuation, migration and VMI workers → table). Every VMI is placed on one node,
 * which is then tainted `kubevirt.io/drain:NoSchedule` (the evacuation controller's trigger; a
 * `kubectl drain` reaches the same controller through virt-api's eviction webhook).
 *
 * The anchor is KubeVirt's own limits: 2 outbound migrations per node, 5 per cluster. With one
 * source node the drain can go no faster than ⌈N / 2⌉ waves of one migration's duration; the
 * figure "share of the ideal" is that bound over the measured drain time (1 = the limits are the
 * only thing that holds it back). Also: the peaks (never above the limits), migrations created
 * (N when none was created twice), and API calls per migrated VMI. Never a test: nothing fails on
 * speed. There is no in-process baseline for this row (the baseline runs the VMI and replica set
 * controllers only).
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NODES, VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { controllerFigures, perVmi } from './support/controller-figures.ts';
import { startCluster } from './support/cluster.ts';
import { MigrationPeakTracker } from './support/migration-peaks.ts';
import { startSystem } from './support/systems.ts';
import { CONTROLLER_IDENTITY, USER_IDENTITY, vmiManifest, waitUntil, waitUntilAsync } from './support/vmi-run.ts';

const N = Number(process.env.BENCH_DRAIN_VMIS ?? (process.env.BENCH_QUICK === '1' ? 10 : 50));
const NS = 'default';
const PER_NODE_LIMIT = 2;
const DRAIN_TAINT = { key: 'kubevirt.io/drain', value: 'draining', effect: 'NoSchedule' };

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

export async function run(): Promise<Record<string, unknown>> {
  say(`serverless: drain of a node with ${N} LiveMigrate VMIs`);
  const cluster = await startCluster({ vmis: N, identities: [CONTROLLER_IDENTITY, USER_IDENTITY] });
  const [drained, ...others] = cluster.nodeNames as [string, ...string[]];
  const sys = await startSystem('serverless', cluster);
  const user = createKubeClient(cluster.kubeConfig(USER_IDENTITY));
  const peaks = new MigrationPeakTracker();
  const node = new Map<string, string>();
  const running = new Set<string>();
  const podAt = new Map<string, number>();
  const durations: number[] = [];
  const unsubscribe = cluster.onMilestone((m) => {
    peaks.see(m);
    if (m.kind === 'vmi') {
      if (m.node) node.set(m.name, m.node);
      if (m.phase === 'Running') running.add(m.name);
      else running.delete(m.name);
    }
    if (m.kind === 'pod' && m.migrationUid) podAt.set(m.migrationUid, m.time);
    // A migration that ends any way leaves the set of those in flight; only a success is timed.
    if (m.kind === 'migration' && ['Succeeded', 'Failed', 'Deleted'].includes(m.phase) && podAt.has(m.uid)) {
      if (m.phase === 'Succeeded') durations.push(m.time - podAt.get(m.uid)!);
      podAt.delete(m.uid);
    }
  });
  const cordon = (name: string, unschedulable: boolean, taints?: unknown[]) =>
    user.patch(NODES, undefined, name, { type: 'merge', body: { spec: { unschedulable, ...(taints ? { taints } : {}) } } });
  try {
    // arrange: every VMI on one node (the others cordoned meanwhile), Running and migratable
    for (const n of others) await cordon(n, true);
    const names = Array.from({ length: N }, (_, i) => `drain-${String(i).padStart(4, '0')}`);
    for (const name of names) {
      const vmi = vmiManifest(name, NS) as unknown as VirtualMachineInstance;
      vmi.spec.evictionStrategy = 'LiveMigrate';
      await user.create(VMIS, vmi);
    }
    const placed = await waitUntil(() => names.every((n) => running.has(n) && node.get(n) === drained), 600_000, () => say(`placing: ${names.filter((n) => running.has(n)).length}/${N} Running`));
    const migratable = await waitUntilAsync(async () => {
      const vmis = (await user.list(VMIS, NS)).items;
      return vmis.filter((v) => v.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True')).length >= N;
    }, 120_000);
    for (const n of others) await cordon(n, false);
    const callsBefore = (await cluster.counters()).filter((c) => c.identity === CONTROLLER_IDENTITY).reduce((a, c) => a + c.count, 0);
    const before = controllerFigures(sys.metrics);
    const cpuBefore = process.cpuUsage();
    await cluster.profile?.start();
    // act: the drain
    const t0 = cluster.nowMs();
    await cordon(drained, true, [DRAIN_TAINT]);
    const moved = () => names.filter((n) => running.has(n) && node.get(n) !== undefined && node.get(n) !== drained).length;
    const ok = await waitUntil(() => moved() >= N && podAt.size === 0, 1_800_000, () => say(`draining: ${moved()}/${N} moved, peak ${peaks.peaks.cluster} running / ${peaks.peaks.perNode} outbound`));
    const seconds = (cluster.nowMs() - t0) / 1000;
    const calls = (await cluster.counters()).filter((c) => c.identity === CONTROLLER_IDENTITY).reduce((a, c) => a + c.count, 0) - callsBefore;
    const clusterCpu = await cluster.profile?.stop();
    const cpu = process.cpuUsage(cpuBefore);
    const after = controllerFigures(sys.metrics);
    // Per controller: what its reconciles sent (the relay's and the config cache's calls are not in it).
    const byController = Object.fromEntries(Object.entries(after.calls).map(([c, n]) => [c, round((n - (before.calls[c] ?? 0)) / N, 1)]).filter(([, n]) => (n as number) > 0));
    const migrationReconciles = (after.reconciles.migration ?? 0) - (before.reconciles.migration ?? 0);
    const migrationCalls = Object.fromEntries(Object.entries(perVmi(after.callsByVerb, before.callsByVerb, N, 50)).filter(([k]) => k.startsWith('migration ')).map(([k, n]) => [k.slice('migration '.length), round(n, 1)]));
    const avgMigrationSeconds = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length / 1000 : 0;
    const idealSeconds = Math.ceil(N / PER_NODE_LIMIT) * avgMigrationSeconds;
    const figures = {
      vmis: N,
      placed,
      migratable,
      allMoved: ok,
      secondsToDrained: round(seconds),
      vmisPerMinute: round((N / seconds) * 60, 1),
      avgMigrationSeconds: round(avgMigrationSeconds),
      idealSeconds: round(idealSeconds),
      shareOfIdeal: round(idealSeconds / seconds, 2),
      peakRunning: peaks.peaks.cluster,
      peakOutboundPerNode: peaks.peaks.perNode,
      targetPodsCreated: peaks.peaks.targetPods,
      apiCallsPerMovedVmi: round(calls / N, 1),
      apiCallsPerMovedVmiByController: byController,
      migrationReconcilesPerMovedVmi: round(migrationReconciles / N, 1),
      migrationCallsPerMovedVmi: migrationCalls,
      // The benchmark process (relay, queue, every controller's workers) and the cluster's, per VMI moved.
      pipelineCpuMsPerMovedVmi: round((cpu.user + cpu.system) / 1000 / N, 1),
      ...(clusterCpu ? { clusterCpuMsPerMovedVmi: round((clusterCpu.sampledSeconds * (100 - clusterCpu.idlePercent)) / 100 * 1000 / N, 1) } : {}),
      anchor: `KubeVirt's limits: ${PER_NODE_LIMIT} outbound per node, 5 per cluster → at best ⌈N/2⌉ waves`,
    };
    say(`serverless: drained in ${figures.secondsToDrained} sandbox s (${figures.shareOfIdeal} of the limits' ideal, migrations ${figures.avgMigrationSeconds} s each), peaks ${figures.peakRunning}/${figures.peakOutboundPerNode}, ${figures.apiCallsPerMovedVmi} API calls per VMI (${JSON.stringify(byController)}), ${figures.migrationReconcilesPerMovedVmi} migration reconciles per VMI`);
    return figures;
  } finally {
    unsubscribe();
    await sys.stop();
    await cluster.stop();
  }
}
