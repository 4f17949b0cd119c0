/**
 * A node drain of N LiveMigrate VMIs (BENCH_DRAIN_VMIS, default 50; 10 with BENCH_QUICK=1) on a
 * fresh sandbox in a child process (support/cluster.ts), through the serverless path (relay →
 * SQLite queue → evacuation, migration and VMI workers → table) and, when KUBEVIRT_VIRT_CONTROLLER
 * names it, through KubeVirt's own virt-controller (support/kubevirt.ts). Every VMI is placed on
 * one node, which is then tainted `kubevirt.io/drain:NoSchedule` (the evacuation controller's
 * trigger; a `kubectl drain` reaches the same controller through virt-api's eviction webhook).
 *
 * The anchor is KubeVirt's own limits: 2 outbound migrations per node, 5 per cluster. With one
 * source node the drain can go no faster than ⌈N / 2⌉ waves of one migration's duration; the
 * figure "share of the ideal" is that bound over the measured drain time (1 = the limits are the
 * only thing that holds it back). Also: the peaks (never above the limits), migrations created
 * (N when none was created twice), API calls per migrated VMI, the controller process's CPU.
 * BENCH_DRAIN_ROUNDS rounds (default 3; 1 quick), the systems' order rotating, each figure the
 * median of its rounds; then the same on the real control plane with BENCH_REAL_DRAIN_VMIS
 * (default 10; BENCH_REAL=0 skips it, BENCH_REAL_ONLY=1 runs only it). Never a test: nothing
 * fails on speed. There is no in-process baseline for this row (the baseline runs the VMI and
 * replica set controllers only).
 */
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NODES, VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { ControlPlane } from '../../sandbox/real/control-plane.ts';
import { mediansBySystem } from './support/burst-rounds.ts';
import { controllerFigures, perVmi } from './support/controller-figures.ts';
import { externalFigures, startRun } from './support/e2e-runs.ts';
import { identityRequests } from './support/identity-requests.ts';
import { MigrationPeakTracker } from './support/migration-peaks.ts';
import { onBothLanes } from './support/real-lane.ts';
import { controllerCpuMicros, controllerMemoryMark, controllerMemoryPer } from './support/run-figures.ts';
import { chooseSystems, runRounds, type Failure, type SystemName } from './support/system-choice.ts';
import { USER_IDENTITY, vmiManifest, waitUntil, waitUntilAsync } from './support/vmi-run.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = Number(process.env.BENCH_DRAIN_VMIS ?? (QUICK ? 10 : 50));
const N_REAL = Number(process.env.BENCH_REAL_DRAIN_VMIS ?? 10);
const ROUNDS = Number(process.env.BENCH_DRAIN_ROUNDS ?? (QUICK ? 1 : 3));
const CANDIDATES: SystemName[] = ['serverless', 'kubevirt'];
const NS = 'default';
const PER_NODE_LIMIT = 2;
const DRAIN_TAINT = { key: 'kubevirt.io/drain', value: 'draining', effect: 'NoSchedule' };

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

async function drainRun(name: SystemName, n: number, lane: ControlPlane) {
  say(`${name} (${lane}): drain of a node with ${n} LiveMigrate VMIs`);
  const { cluster, sys } = await startRun(name, n, lane);
  const [drained, ...others] = cluster.nodeNames as [string, ...string[]];
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
  const cordon = (nodeName: string, unschedulable: boolean, taints?: unknown[]) =>
    user.patch(NODES, undefined, nodeName, { type: 'merge', body: { spec: { unschedulable, ...(taints ? { taints } : {}) } } });
  try {
    // arrange: every VMI on one node (the others cordoned meanwhile), Running and migratable
    for (const o of others) await cordon(o, true);
    const names = Array.from({ length: n }, (_, i) => `drain-${String(i).padStart(4, '0')}`);
    for (const vmiName of names) {
      const vmi = vmiManifest(vmiName, NS) as unknown as VirtualMachineInstance;
      vmi.spec.evictionStrategy = 'LiveMigrate';
      // Masquerade on the pod network: virt-api's default binding there is bridge, which
      // virt-handler reports as not live-migratable (InterfaceNotLiveMigratable), as a real one does.
      vmi.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {} }];
      vmi.spec.networks = [{ name: 'default', pod: {} }];
      await user.create(VMIS, vmi);
    }
    const placed = await waitUntil(() => names.every((x) => running.has(x) && node.get(x) === drained), 600_000, () => say(`placing: ${names.filter((x) => running.has(x)).length}/${n} Running`));
    const migratable = await waitUntilAsync(async () => {
      const vmis = (await user.list(VMIS, NS)).items;
      return vmis.filter((v) => v.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True')).length >= n;
    }, 120_000);
    if (!migratable) {
      // A drain of VMIs that cannot migrate never ends: say why, rather than wait out its limit.
      const stuck = (await user.list(VMIS, NS)).items.find((v) => !v.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True'));
      const why = stuck?.status?.conditions?.find((c) => c.type === 'LiveMigratable');
      throw new Error(`${name} (${lane}): the VMIs never all became LiveMigratable within 120 s, so the drain could not move them; ${stuck?.metadata?.name ?? '?'}: ${why ? `${why.status} ${why.reason ?? ''} ${why.message ?? ''}`.trim() : 'no LiveMigratable condition'}`);
    }
    for (const o of others) await cordon(o, false);
    const countersBefore = await cluster.counters();
    const before = controllerFigures(sys.metrics);
    const memoryBefore = controllerMemoryMark(sys);
    const cpuBefore = controllerCpuMicros(sys);
    const shimBefore = sys.external?.shimCpuMicros() ?? 0;
    await cluster.profile?.start();
    // act: the drain
    const t0 = cluster.nowMs();
    await cordon(drained, true, [DRAIN_TAINT]);
    const moved = () => names.filter((x) => running.has(x) && node.get(x) !== undefined && node.get(x) !== drained).length;
    const ok = await waitUntil(() => moved() >= n && podAt.size === 0, 1_800_000, () => say(`draining: ${moved()}/${n} moved, peak ${peaks.peaks.cluster} running / ${peaks.peaks.perNode} outbound`));
    const seconds = (cluster.nowMs() - t0) / 1000;
    const requests = identityRequests(countersBefore, await cluster.counters(), sys.identity, n);
    const clusterCpu = await cluster.profile?.stop();
    const cpuUsed = controllerCpuMicros(sys) - cpuBefore;
    const memory = controllerMemoryPer(sys, memoryBefore, n);
    const avgMigrationSeconds = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length / 1000 : 0;
    const idealSeconds = Math.ceil(n / PER_NODE_LIMIT) * avgMigrationSeconds;
    const common = {
      vmis: n,
      placed,
      migratable,
      allMoved: ok,
      secondsToDrained: round(seconds),
      vmisPerMinute: round((n / seconds) * 60, 1),
      avgMigrationSeconds: round(avgMigrationSeconds),
      idealSeconds: round(idealSeconds),
      shareOfIdeal: round(idealSeconds / seconds, 2),
      peakRunning: peaks.peaks.cluster,
      peakOutboundPerNode: peaks.peaks.perNode,
      targetPodsCreated: peaks.peaks.targetPods,
      // Everything the system's identity sent during the drain, as the API server counted it.
      apiCallsPerMovedVmi: round(requests.requestsPerVmi, 1),
      controller: { requests, cpuMsPerMovedVmi: round(cpuUsed / 1000 / n, 1), memory },
      ...(clusterCpu ? { clusterCpuMsPerMovedVmi: round((clusterCpu.sampledSeconds * (100 - clusterCpu.idlePercent)) / 100 * 1000 / n, 1) } : {}),
      anchor: `KubeVirt's limits: ${PER_NODE_LIMIT} outbound per node, 5 per cluster → at best ⌈N/2⌉ waves`,
    };
    say(`${name}: drained in ${common.secondsToDrained} sandbox s (${common.shareOfIdeal} of the limits' ideal, migrations ${common.avgMigrationSeconds} s each), peaks ${common.peakRunning}/${common.peakOutboundPerNode}, ${common.apiCallsPerMovedVmi} API calls per VMI (${requests.writesPerVmi} writes), CPU ${common.controller.cpuMsPerMovedVmi} ms per VMI`);
    if (sys.external) return { ...common, kubevirt: externalFigures(sys, n, shimBefore) };
    const after = controllerFigures(sys.metrics);
    // Per controller: what its reconciles sent (the relay's and the config cache's calls are not in it).
    const byController = Object.fromEntries(Object.entries(after.calls).map(([c, v]) => [c, round((v - (before.calls[c] ?? 0)) / n, 1)]).filter(([, v]) => (v as number) > 0));
    const migrationReconciles = (after.reconciles.migration ?? 0) - (before.reconciles.migration ?? 0);
    const migrationCalls = Object.fromEntries(Object.entries(perVmi(after.callsByVerb, before.callsByVerb, n, 50)).filter(([k]) => k.startsWith('migration ')).map(([k, v]) => [k.slice('migration '.length), round(v, 1)]));
    say(`${name}: ${JSON.stringify(byController)} per VMI by controller, ${round(migrationReconciles / n, 1)} migration reconciles per VMI`);
    return {
      ...common,
      apiCallsPerMovedVmiByController: byController,
      migrationReconcilesPerMovedVmi: round(migrationReconciles / n, 1),
      migrationCallsPerMovedVmi: migrationCalls,
      // The benchmark process (relay, queue, every controller's workers), per VMI moved.
      pipelineCpuMsPerMovedVmi: round(cpuUsed / 1000 / n, 1),
    };
  } finally {
    unsubscribe();
    await sys.stop();
    await cluster.stop();
  }
}

type DrainFigures = Awaited<ReturnType<typeof drainRun>>;

/** ROUNDS drains of every system on one control plane, the order rotating; serverless's medians at the top level, every system's in `bySystem`. */
async function laneRuns(lane: ControlPlane, n: number) {
  const { systems, kubevirtSkipped } = chooseSystems(`drain (${lane})`, CANDIDATES, say);
  const failures: Failure[] = [];
  const rounds = await runRounds(`drain ${n} (${lane})`, systems, ROUNDS, failures, (sys) => drainRun(sys, n, lane), say);
  const bySystem = mediansBySystem(systems, rounds);
  const s = bySystem.serverless;
  const k = bySystem.kubevirt;
  const ratio = (x: number | undefined, y: number | undefined) => (x === undefined || y === undefined || y === 0 ? undefined : round(x / y));
  return {
    ...(s ?? { vmis: n }),
    systems,
    ...(kubevirtSkipped !== undefined ? { kubevirtSkipped } : {}),
    ...(failures.length ? { failures } : {}),
    bySystem,
    rounds: rounds.map((r) => ({ order: r.order, secondsToDrained: Object.fromEntries(Object.entries(r.runs).map(([key, v]) => [key, v.secondsToDrained])) })),
    // Ours against KubeVirt's: drain speed (KubeVirt's seconds / ours: ≥ 1 = ours faster), requests and writes per VMI moved (ours / KubeVirt's).
    vsKubevirt: s && k ? { drainSpeed: ratio(k.secondsToDrained, s.secondsToDrained), requestsPerVmi: ratio(s.controller.requests.requestsPerVmi, k.controller.requests.requestsPerVmi), writesPerVmi: ratio(s.controller.requests.writesPerVmi, k.controller.requests.writesPerVmi), cpuMsPerVmi: ratio(s.controller.cpuMsPerMovedVmi, k.controller.cpuMsPerMovedVmi) } : undefined,
  };
}

export async function run(): Promise<Record<string, unknown>> {
  return onBothLanes('test/bench/drain.bench.ts', (lane) => laneRuns(lane, lane === 'real' ? N_REAL : N), say);
}
