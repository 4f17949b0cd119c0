/**
 * End-to-end benchmarks on the sandbox cluster, the serverless path side by side with the
 * client-go-style baseline (test/bench/baseline/), each on a fresh sandbox in a child process of
 * its own (support/cluster.ts; BENCH_SANDBOX=inprocess runs it in the benchmark's process):
 *
 * 1. latency — N VMIs created at a steady rate (BENCH_RATE/s, default 5 — below what one 2-core
 *    machine reconciles, so the figure is event latency, not queueing behind a backlog): VMI create sent →
 *    launcher pod created (audit log, sandbox clock), p50/p99 and the serverless/baseline ratio;
 *    then, once all are Running, API calls per VMI by verb and resource (sandbox counters of the
 *    controllers' identity) against KubeVirt's CI budget, writes per VMI, reads per reconcile.
 * 2. throughput — N VMIs created at once: VMIs/s reaching Scheduled, a timing breakdown (queue
 *    wait, reconcile, API time) and a CPU profile by component (where the one busy core goes).
 *
 * N = BENCH_VMIS, default 1000 (300 with BENCH_QUICK=1). Then the same on the real control plane
 * (BENCH_REAL_VMIS; BENCH_REAL=0 skips it, BENCH_REAL_ONLY=1 runs only it). Never a test:
 * nothing fails on speed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { binaryPath, ensureBuilt, kubernetesVersion, missingToolchain } from '../../infra/sandbox/real/build.ts';
import type { ControlPlane } from '../../infra/sandbox/real/control-plane.ts';
import { CpuProfiler } from './support/cpu-profile.ts';
import { startCluster, type BenchCluster } from './support/cluster.ts';
import { startSystem, type RunningSystem, type SystemName } from './support/systems.ts';
import { CONTROLLER_IDENTITY, createVmis, percentile, USER_IDENTITY, vmiNames, VmiTracker, waitUntil } from './support/vmi-run.ts';

const N = Number(process.env.BENCH_VMIS ?? (process.env.BENCH_QUICK === '1' ? 300 : 1000));
const RATE = Number(process.env.BENCH_RATE ?? 5);
const SYSTEMS: SystemName[] = ['baseline', 'serverless'];
const IDENTITIES = [CONTROLLER_IDENTITY, USER_IDENTITY];
/**
 * The real control plane's runs (docs/control-plane.md): the same two systems against the
 * upstream kube-apiserver, kube-controller-manager and kube-scheduler, with fewer VMIs (a real
 * cluster start costs tens of seconds and its components share the machine's 2 cores).
 * BENCH_REAL=0 skips them; without a Go toolchain (and no built binary) they are skipped, saying so.
 */
const N_REAL = Number(process.env.BENCH_REAL_VMIS ?? 200);

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * The VMI controller's figures from the system's metrics registry: queue wait and reconcile
 * averages, reconciles, and its API calls by verb and resource. The serverless runtime also runs
 * the VM controller (every VMI event also names a VM key); these figures leave it out so that
 * both systems are compared on the same controller.
 */
function vmiMetrics(sys: RunningSystem) {
  const m = sys.metrics;
  const avg = (name: string, filter: Record<string, string>) => {
    const n = m.total(name, filter);
    return { avg: n ? m.sum(name, filter) / n : 0, n };
  };
  const calls: Record<string, number> = {};
  for (const r of m.series('apiserver_requests_total')) {
    if (r.labels.controller !== 'vmi') continue;
    const call = `${r.labels.verb} ${r.labels.resource}`;
    calls[call] = (calls[call] ?? 0) + r.value;
  }
  const q = avg('workqueue_queue_duration_seconds', { name: 'vmi' });
  const r = avg('reconcile_time_seconds', { controller: 'vmi' });
  const allControllersReconciles = m.total('reconcile_time_seconds');
  return {
    queueWaitAvgMs: round(q.avg * 1000, 1),
    reconcileAvgMs: round(r.avg * 1000, 1),
    reconciles: r.n,
    allControllersReconciles,
    // For the cost model: requeue-after timers and keys the relay sent, per reconcile of any controller.
    requeuesPerReconcile: round(m.total('reconcile_total', { result: 'requeued' }) / Math.max(1, allControllersReconciles), 3),
    keysSentPerReconcile: round(m.total('workqueue_adds_total') / Math.max(1, allControllersReconciles), 3),
    calls,
  };
}

interface ApiFigures {
  /** The VMI controller's reconciles: calls per VMI by verb and resource. */
  vmiControllerPerVmi: Record<string, number>;
  /** Everything the system's identity sent in namespaces (every controller), per VMI. */
  identityPerVmi: Record<string, number>;
  /** Cluster-wide calls: relay/informer list+watch and the cluster-config cache. */
  clusterWideCalls: Record<string, number>;
  podCreates: number;
  vmiPatchPerPodCreate: number;
  vmiUpdatePerPodCreate: number;
  /** VMI controller writes per VMI, events excluded. */
  controllerWritesPerVmi: number;
  eventWritesPerVmi: number;
  readsPerReconcile: number;
  reconcilesPerVmi: number;
}

const isRead = (call: string) => call.startsWith('get ') || call.startsWith('list ');

async function apiFigures(cluster: BenchCluster, m: ReturnType<typeof vmiMetrics>, N: number): Promise<ApiFigures> {
  const identityPerVmi: Record<string, number> = {};
  const clusterWideCalls: Record<string, number> = {};
  for (const c of await cluster.counters()) {
    if (c.identity !== CONTROLLER_IDENTITY) continue;
    const call = `${c.verb} ${c.resource}`;
    const into = c.namespace === '' || c.verb === 'watch' ? clusterWideCalls : identityPerVmi;
    into[call] = (into[call] ?? 0) + c.count;
  }
  const podCreates = identityPerVmi['create pods'] ?? 0;
  const patches = identityPerVmi['patch virtualmachineinstances'] ?? 0;
  const updates = identityPerVmi['update virtualmachineinstances'] ?? 0;
  let writes = 0;
  let reads = 0;
  for (const [call, n] of Object.entries(m.calls)) {
    if (isRead(call)) reads += n;
    else if (!call.endsWith(' events')) writes += n;
  }
  const perVmi = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort().map(([k, v]) => [k, round(v / N, 3)]));
  return {
    vmiControllerPerVmi: perVmi(m.calls),
    identityPerVmi: perVmi(identityPerVmi),
    clusterWideCalls,
    podCreates,
    vmiPatchPerPodCreate: round(patches / Math.max(1, podCreates)),
    vmiUpdatePerPodCreate: round(updates / Math.max(1, podCreates)),
    controllerWritesPerVmi: round(writes / N),
    eventWritesPerVmi: round((m.calls['create events'] ?? 0) / N),
    readsPerReconcile: round(reads / Math.max(1, m.reconciles)),
    reconcilesPerVmi: round(m.reconciles / N),
  };
}

async function latencyRun(name: SystemName, N: number, controlPlane: ControlPlane = 'emulator') {
  say(`${name} (${controlPlane}): latency — ${N} VMIs at ${RATE}/s`);
  const cluster = await startCluster({ vmis: N, controlPlane, identities: IDENTITIES });
  const tracker = new VmiTracker(cluster);
  const sys = await startSystem(name, cluster);
  try {
    const names = vmiNames('lat', N);
    await createVmis(cluster, tracker, names, { ratePerSec: RATE, onProgress: (d) => d % 250 === 0 && say(`${name}: ${d}/${N} created, ${tracker.count((m) => m.podCreatedAt !== undefined)} pods`) });
    const podsOk = await waitUntil(() => tracker.count((m) => m.podCreatedAt !== undefined) >= N, 120_000, () => say(`${name}: ${tracker.count((m) => m.podCreatedAt !== undefined)}/${N} pods`));
    const runningOk = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, 180_000, () => say(`${name}: ${tracker.count((m) => m.runningAt !== undefined)}/${N} Running`));
    // Let trailing reconciles (the Running status sync) finish before counting.
    await new Promise((r) => setTimeout(r, 1500));
    const ms = [...tracker.vmis.values()].filter((m) => m.podCreatedAt !== undefined && m.createSentAt !== undefined).map((m) => m.podCreatedAt! - m.createSentAt!);
    const m = vmiMetrics(sys);
    const { calls: _calls, ...avg } = m;
    const figures = {
      vmis: N,
      ratePerSec: RATE,
      allPodsCreated: podsOk,
      allRunning: runningOk,
      eventToPodP50Ms: percentile(ms, 0.5),
      eventToPodP99Ms: percentile(ms, 0.99),
      eventToPodMaxMs: percentile(ms, 1),
      duplicatePods: tracker.count((m) => m.podCreates > 1),
      ...avg,
      apiCallAvgMs: round(sys.apiTimer.totalMs / Math.max(1, sys.apiTimer.calls), 2),
      failedReconciles: sys.failed,
      // Expectations calls per reconcile of any controller (the serverless path's table; 0 for the baseline's memory).
      tableReadsPerReconcile: round(sys.table.reads / Math.max(1, m.allControllersReconciles)),
      tableWritesPerReconcile: round(sys.table.writes / Math.max(1, m.allControllersReconciles)),
      api: await apiFigures(cluster, m, N),
    };
    say(`${name}: p50 ${figures.eventToPodP50Ms} ms, p99 ${figures.eventToPodP99Ms} ms, ${figures.api.reconcilesPerVmi} reconciles/VMI, ${figures.api.controllerWritesPerVmi} writes/VMI`);
    return figures;
  } finally {
    await sys.stop();
    tracker.stop();
    await cluster.stop();
  }
}

async function burstRun(name: SystemName, N: number, controlPlane: ControlPlane = 'emulator') {
  say(`${name} (${controlPlane}): throughput — ${N} VMIs at once`);
  const cluster = await startCluster({ vmis: N, controlPlane, identities: IDENTITIES });
  const tracker = new VmiTracker(cluster);
  const sys = await startSystem(name, cluster);
  const profiler = new CpuProfiler();
  try {
    const names = vmiNames('burst', N);
    await profiler.start();
    await cluster.profile?.start();
    const t0 = cluster.nowMs();
    await createVmis(cluster, tracker, names, { concurrency: 50 });
    const createdIn = cluster.nowMs() - t0;
    say(`${name}: ${N} created in ${round(createdIn / 1000, 1)} s`);
    const ok = await waitUntil(() => tracker.count((m) => m.scheduledAt !== undefined) >= N, 300_000, () => say(`${name}: ${tracker.count((m) => m.scheduledAt !== undefined)}/${N} Scheduled`));
    const cpu = await profiler.stop();
    const clusterCpu = await cluster.profile?.stop();
    const lastScheduled = Math.max(...[...tracker.vmis.values()].map((m) => m.scheduledAt ?? 0));
    const seconds = (lastScheduled - t0) / 1000;
    const toPod = [...tracker.vmis.values()].filter((m) => m.podCreatedAt !== undefined).map((m) => m.podCreatedAt! - m.createSentAt!);
    const { calls: _calls, ...avg } = vmiMetrics(sys);
    const figures = {
      vmis: N,
      allScheduled: ok,
      createSeconds: round(createdIn / 1000),
      secondsToAllScheduled: round(seconds),
      vmisPerSecondScheduled: round(N / seconds, 1),
      eventToPodP50Ms: percentile(toPod, 0.5),
      eventToPodP99Ms: percentile(toPod, 0.99),
      duplicatePods: tracker.count((m) => m.podCreates > 1),
      breakdown: {
        ...avg,
        reconcileP50Ms: percentile(sys.reconcileMs, 0.5),
        reconcileP99Ms: percentile(sys.reconcileMs, 0.99),
        // The timer sees every controller's calls (and the cluster-config cache's): per reconcile of any controller.
        apiCallsPerReconcile: round(sys.apiTimer.calls / Math.max(1, avg.allControllersReconciles)),
        apiMsPerReconcile: round(sys.apiTimer.totalMs / Math.max(1, avg.allControllersReconciles), 1),
        apiCallP50Ms: percentile(sys.apiTimer.samples, 0.5),
        apiCallP99Ms: percentile(sys.apiTimer.samples, 0.99),
      },
      sandboxPlacement: cluster.placement,
      // With the cluster in a process of its own, each process has its own profile (and core).
      cpuProfile: clusterCpu ? { pipeline: cpu, cluster: clusterCpu } : cpu,
    };
    say(`${name}: ${figures.vmisPerSecondScheduled} VMIs/s to Scheduled; queue wait ${avg.queueWaitAvgMs} ms, reconcile ${avg.reconcileAvgMs} ms avg`);
    return figures;
  } finally {
    await sys.stop();
    tracker.stop();
    await cluster.stop();
  }
}

/** Both systems on the real control plane, or why not. */
async function realRuns(): Promise<Record<string, unknown>> {
  if (process.env.BENCH_REAL === '0') return { skipped: 'BENCH_REAL=0' };
  if (!existsSync(binaryPath()) && missingToolchain()) return { skipped: missingToolchain() };
  await ensureBuilt((line) => say(line));
  const latency: Record<string, Awaited<ReturnType<typeof latencyRun>>> = {};
  for (const s of SYSTEMS) latency[s] = await latencyRun(s, N_REAL, 'real');
  const throughput: Record<string, Awaited<ReturnType<typeof burstRun>>> = {};
  for (const s of SYSTEMS) throughput[s] = await burstRun(s, N_REAL, 'real');
  const b = latency.baseline!;
  const s = latency.serverless!;
  return {
    vmis: N_REAL,
    kubernetes: kubernetesVersion(),
    measuredAt: new Date().toISOString(),
    latency,
    throughput,
    ratios: {
      eventToPodP50: round(s.eventToPodP50Ms / b.eventToPodP50Ms),
      eventToPodP99: round(s.eventToPodP99Ms / b.eventToPodP99Ms),
      throughput: round(throughput.serverless!.vmisPerSecondScheduled / throughput.baseline!.vmisPerSecondScheduled),
    },
  };
}

/**
 * BENCH_REAL_ONLY=1 runs only the real control plane's columns and keeps the emulator's from the
 * last full run in docs/benchmarks.json (the ratios that count are each control plane's own:
 * serverless / baseline measured side by side in one run).
 */
function previousEmulatorRun(): { figures: Record<string, unknown>; generatedAt: string } {
  const file = 'docs/benchmarks.json';
  const prev = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { generatedAt?: string; results?: Record<string, Record<string, unknown>> }) : {};
  const figures = prev.results?.['test/bench/e2e.bench.ts'];
  if (!figures?.latency) throw new Error(`BENCH_REAL_ONLY=1: no emulator figures in ${file} to keep; run the full bench once`);
  return { figures, generatedAt: String(figures.emulatorMeasuredAt ?? prev.generatedAt ?? 'unknown') };
}

export async function run(): Promise<Record<string, unknown>> {
  if (process.env.BENCH_REAL_ONLY === '1') {
    const prev = previousEmulatorRun();
    return { ...prev.figures, emulatorMeasuredAt: prev.generatedAt, real: await realRuns() };
  }
  const latency: Record<string, Awaited<ReturnType<typeof latencyRun>>> = {};
  for (const s of SYSTEMS) latency[s] = await latencyRun(s, N);
  const throughput: Record<string, Awaited<ReturnType<typeof burstRun>>> = {};
  for (const s of SYSTEMS) throughput[s] = await burstRun(s, N);
  const b = latency.baseline!;
  const s = latency.serverless!;
  const real = await realRuns();
  return {
    vmis: N,
    latency,
    throughput,
    real,
    ratios: {
      eventToPodP50: round(s.eventToPodP50Ms / b.eventToPodP50Ms),
      eventToPodP99: round(s.eventToPodP99Ms / b.eventToPodP99Ms),
      throughput: round(throughput.serverless!.vmisPerSecondScheduled / throughput.baseline!.vmisPerSecondScheduled),
    },
  };
}
