/**
 * A VMI replica set scaled 0 → N (BENCH_RS_REPLICAS, default 500; 100 with BENCH_QUICK=1) through
 * `/scale`, as `kubectl scale` does, on a fresh sandbox per system (in a child process, support/cluster.ts): the serverless path (relay →
 * SQLite queue → replica set and VMI workers → table) side by side with the in-process baseline
 * (informers → in-memory workqueues → the same replica set and VMI reconciles, expectations in
 * memory) and, when KUBEVIRT_VIRT_CONTROLLER names it, KubeVirt's own virt-controller
 * (support/kubevirt.ts). Figures: seconds from the scale request to the last replica Running
 * (sandbox clock), API calls per replica (the replica set controller's alone, and everything the
 * system's identity sent), the replica set's reconciles, how many VMIs it created (N when nothing
 * was created twice), the controller process's CPU per replica. BENCH_RS_ROUNDS rounds (default
 * 3; 1 quick), the systems' order rotating; each figure the median of its rounds. Then the same on
 * the real control plane with BENCH_REAL_RS_REPLICAS (default 100; 50 quick; BENCH_REAL=0 skips
 * it, BENCH_REAL_ONLY=1 runs only it). Never a test: nothing fails on speed.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { VMI_REPLICA_SETS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { ControlPlane } from '../../sandbox/real/control-plane.ts';
import type { RunningSystem } from './support/systems.ts';
import { externalFigures, startRun } from './support/e2e-runs.ts';
import { identityRequests } from './support/identity-requests.ts';
import { mediansBySystem } from './support/burst-rounds.ts';
import { onBothLanes } from './support/real-lane.ts';
import { controllerCpuMicros, controllerMemoryMark, controllerMemoryPer } from './support/run-figures.ts';
import { chooseSystems, runRounds, type Failure, type SystemName } from './support/system-choice.ts';
import { USER_IDENTITY, vmiManifest, waitUntil, waitUntilAsync } from './support/vmi-run.ts';
import { ratiosVsKubevirt } from './support/vs-kubevirt.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = Number(process.env.BENCH_RS_REPLICAS ?? (QUICK ? 100 : 500));
const N_REAL = Number(process.env.BENCH_REAL_RS_REPLICAS ?? (QUICK ? 50 : 100));
const ROUNDS = Number(process.env.BENCH_RS_ROUNDS ?? (QUICK ? 1 : 3));
const CANDIDATES: SystemName[] = ['baseline', 'serverless', 'kubevirt'];
const RS = 'bench-rs';
const NS = 'default';

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

/** One controller's API calls by `verb resource`, from the system's metrics. */
function callsOf(sys: RunningSystem, controller: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const r of sys.metrics.series('apiserver_requests_total')) {
    if (r.labels.controller !== controller) continue;
    const call = `${r.labels.verb} ${r.labels.resource}`;
    calls[call] = (calls[call] ?? 0) + r.value;
  }
  return calls;
}

const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

async function scaleRun(name: SystemName, n: number, lane: ControlPlane) {
  say(`${name} (${lane}): replica set 0 → ${n}`);
  const { cluster, sys } = await startRun(name, n, lane, { replicaSets: true });
  const user = createKubeClient(cluster.kubeConfig(USER_IDENTITY));
  const perReplica = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort().map(([k, v]) => [k, round(v / n, 3)]));
  const running = new Map<string, number>();
  let created = 0;
  let uid: string | undefined;
  const unsubscribe = cluster.onMilestone((e) => {
    if (e.kind !== 'vmi' || !uid || e.ownerUid !== uid) return;
    if (e.verb === 'create') created++;
    if (e.phase === 'Running' && !running.has(e.name)) running.set(e.name, e.time);
  });
  try {
    const template = vmiManifest('template') as { spec: VirtualMachineInstance['spec'] };
    const labels = { app: RS };
    const rs = await user.create(VMI_REPLICA_SETS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceReplicaSet',
      metadata: { name: RS, namespace: NS },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: template.spec } },
    } as VirtualMachineInstanceReplicaSet);
    uid = rs.metadata?.uid;
    // Let the controller annotate and write the empty status before the clock starts.
    await new Promise((r) => setTimeout(r, 1500));
    const countersBefore = await cluster.counters();
    const rsCallsBefore = total(callsOf(sys, 'replicaset'));
    const memoryBefore = controllerMemoryMark(sys);
    const cpuBefore = controllerCpuMicros(sys);
    const shimBefore = sys.external?.shimCpuMicros() ?? 0;
    const t0 = cluster.nowMs();
    await user.updateScale(VMI_REPLICA_SETS, NS, RS, n);
    const ok = await waitUntil(() => running.size >= n, 600_000, () => say(`${name}: ${running.size}/${n} Running, ${created} created`));
    const seconds = (Math.max(...running.values()) - t0) / 1000;
    const cpuUsed = controllerCpuMicros(sys) - cpuBefore;
    // Trailing reconciles (status with readyReplicas) before counting.
    const statusOk = await waitUntilAsync(async () => (await user.get(VMI_REPLICA_SETS, NS, RS))?.status?.readyReplicas === n, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    const requests = identityRequests(countersBefore, await cluster.counters(), sys.identity, n);
    const memory = controllerMemoryPer(sys, memoryBefore, n);
    const common = {
      replicas: n,
      allRunning: ok,
      statusReadyReplicas: statusOk,
      secondsToAllRunning: round(seconds),
      replicasPerSecond: round(n / seconds, 1),
      vmisCreated: created,
      // Everything the system's identity sent from the scale request to readyReplicas, as the API server counted it.
      allControllersApiCallsPerReplica: round(requests.requestsPerVmi, 2),
      controller: { requests, cpuMsPerReplica: round(cpuUsed / 1000 / n, 2), memory },
    };
    say(`${name}: ${common.secondsToAllRunning} s to all Running, ${common.allControllersApiCallsPerReplica} calls/replica in all (${requests.writesPerVmi} writes), CPU ${common.controller.cpuMsPerReplica} ms/replica`);
    if (sys.external) return { ...common, kubevirt: externalFigures(sys, n, shimBefore) };
    const rsCalls = callsOf(sys, 'replicaset');
    const rsReconciles = sys.metrics.total('reconcile_time_seconds', { controller: 'replicaset' });
    const figures = {
      ...common,
      replicaSetApiCallsPerReplica: round((total(rsCalls) - rsCallsBefore) / n, 3),
      replicaSetCallsPerReplica: perReplica(rsCalls),
      replicaSetReconciles: rsReconciles,
      vmiControllerApiCallsPerReplica: round(total(callsOf(sys, 'vmi')) / n, 2),
      tableOpsPerReplica: round((sys.table.reads + sys.table.writes) / n, 2),
    };
    say(`${name}: ${figures.replicaSetApiCallsPerReplica} replica set calls/replica, ${rsReconciles} replica set reconciles`);
    return figures;
  } finally {
    unsubscribe();
    await sys.stop();
    await cluster.stop();
  }
}

type ScaleFigures = Awaited<ReturnType<typeof scaleRun>>;

/** ROUNDS rounds of every system on one control plane, the order rotating; per system the median of each figure. */
async function laneRuns(lane: ControlPlane, n: number) {
  const { systems, kubevirtSkipped } = chooseSystems(`replica set (${lane})`, CANDIDATES, say);
  const failures: Failure[] = [];
  const rounds = await runRounds(`replica set ${n} (${lane})`, systems, ROUNDS, failures, (sys) => scaleRun(sys, n, lane), say);
  const scale = mediansBySystem(systems, rounds);
  const b = scale.baseline;
  const s = scale.serverless;
  const ratio = (x: number | undefined, y: number | undefined) => (x === undefined || y === undefined || y === 0 ? undefined : round(x / y));
  const toController = (f: ScaleFigures | undefined) =>
    f && { lagAfterLastCreateRunningS: f.secondsToAllRunning, vmisPerSecondRunning: f.replicasPerSecond, requests: f.controller.requests, cpuMsPerVmi: f.controller.cpuMsPerReplica };
  return {
    replicas: n,
    systems,
    ...(kubevirtSkipped !== undefined ? { kubevirtSkipped } : {}),
    ...(failures.length ? { failures } : {}),
    // Each figure the median of its rounds; every round's figures in `rounds`.
    scale,
    rounds: rounds.map((r) => ({ order: r.order, secondsToAllRunning: Object.fromEntries(Object.entries(r.runs).map(([k, v]) => [k, v.secondsToAllRunning])) })),
    ratios: {
      secondsToAllRunning: ratio(s?.secondsToAllRunning, b?.secondsToAllRunning),
      replicaSetApiCallsPerReplica: s && b && 'replicaSetApiCallsPerReplica' in s && 'replicaSetApiCallsPerReplica' in b ? round(s.replicaSetApiCallsPerReplica / Math.max(0.001, b.replicaSetApiCallsPerReplica)) : undefined,
      // The scale request stands for the creates: "lag" is the scale request → the last replica Running.
      vsKubevirt: ratiosVsKubevirt(Object.fromEntries(Object.entries(scale).map(([k, v]) => [k, toController(v)]))),
    },
  };
}

export async function run(): Promise<Record<string, unknown>> {
  return onBothLanes('test/bench/replicaset.bench.ts', (lane) => laneRuns(lane, lane === 'real' ? N_REAL : N), say);
}
