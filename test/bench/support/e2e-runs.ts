/**
 * The e2e benchmark's runs (e2e.bench.ts and scale.bench.ts): one system against a fresh cluster —
 * a steady-rate latency run and a burst — with the figures each reports.
 */
import { scrapeCost } from './scrape-cost.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';
import type { RequestCount } from '../../../sandbox/apiserver/counters.ts';
import { controllerFigures, perVmi } from './controller-figures.ts';
import { CpuProfiler } from './cpu-profile.ts';
import { PauseMonitor, shareOverlapping, type PauseFigures } from './pauses.ts';
import { startCluster, type BenchCluster } from './cluster.ts';
import { startSystem, type RunningSystem, type SystemName } from './systems.ts';
import { CONTROLLER_IDENTITY, createVmis, USER_IDENTITY, vmiNames, VmiTracker, waitUntil, type VmiMilestones } from './vmi-run.ts';
import { retainedHeapBytes } from './retained-heap.ts';
import { percentile } from './stats.ts';

/**
 * Steady-rate creates per second (BENCH_RATE, default 10): well below what either system
 * reconciles on this machine (a burst reaches 26–29/s), so the figure is event latency, not
 * queueing, and three pairs of 1,000 VMIs fit the bench's time budget.
 */
export const DEFAULT_RATE = Number(process.env.BENCH_RATE ?? 10);
export const SYSTEMS: SystemName[] = ['baseline', 'serverless'];
const IDENTITIES = [CONTROLLER_IDENTITY, USER_IDENTITY];


/** A progress line, with the time since the benchmark process started ([m:ss]). */
export function say(line: string): void {
  const s = Math.round(performance.now() / 1000);
  process.stdout.write(`  [${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}] ${line}\n`);
}

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Request counts summed by identity, verb and resource; `verbs` undefined = every verb. */
function requestTotals(counts: readonly RequestCount[], verbs: readonly string[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) {
    if (verbs && !verbs.includes(c.verb)) continue;
    const k = `${c.identity} ${c.verb} ${c.resource}`;
    out[k] = (out[k] ?? 0) + c.count;
  }
  return out;
}

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

export async function latencyRun(name: SystemName, N: number, controlPlane: ControlPlane = 'emulator', RATE = DEFAULT_RATE) {
  say(`${name} (${controlPlane}): latency — ${N} VMIs at ${RATE}/s`);
  const cluster = await startCluster({ vmis: N, controlPlane, identities: IDENTITIES });
  const tracker = new VmiTracker(cluster);
  const sys = await startSystem(name, cluster);
  const pipelinePauses = new PauseMonitor();
  try {
    const names = vmiNames('lat', N);
    pipelinePauses.start();
    await cluster.pauses?.start();
    await createVmis(cluster, tracker, names, { ratePerSec: RATE, onProgress: (d) => d % 250 === 0 && say(`${name}: ${d}/${N} created, ${tracker.count((m) => m.podCreatedAt !== undefined)} pods`) });
    const podsOk = await waitUntil(() => tracker.count((m) => m.podCreatedAt !== undefined) >= N, 120_000, () => say(`${name}: ${tracker.count((m) => m.podCreatedAt !== undefined)}/${N} pods`));
    const runningOk = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, 180_000, () => say(`${name}: ${tracker.count((m) => m.runningAt !== undefined)}/${N} Running`));
    const pauses = { pipeline: pipelinePauses.stop(), cluster: await cluster.pauses?.stop() };
    // Let trailing reconciles (the Running status sync) finish before counting.
    await new Promise((r) => setTimeout(r, 1500));
    const done = [...tracker.vmis.values()].filter((m) => m.podCreatedAt !== undefined && m.createSentAt !== undefined);
    const ms = done.map((m) => m.podCreatedAt! - m.createSentAt!);
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
      pauses: pauseSummary(pauses, done, percentile(ms, 0.99), cluster.nowMs() - Date.now()),
    };
    say(`${name}: p50 ${figures.eventToPodP50Ms} ms, p99 ${figures.eventToPodP99Ms} ms, ${figures.api.reconcilesPerVmi} reconciles/VMI, ${figures.api.controllerWritesPerVmi} writes/VMI`);
    return figures;
  } finally {
    await sys.stop();
    tracker.stop();
    await cluster.stop();
  }
}

/**
 * What the two processes were doing while the slowest VMIs waited: each process's loop delay, GC
 * pauses and stalls, and the share of the VMIs at or above the p99 whose create → pod window
 * overlaps a stall of the pipeline, of the cluster, or of either. `offsetMs` maps the sandbox
 * clock to the wall clock the monitors use (sandbox = wall + offset).
 */
function pauseSummary(
  pauses: { pipeline: PauseFigures; cluster: PauseFigures | undefined },
  done: readonly VmiMilestones[],
  p99Ms: number,
  offsetMs: number,
) {
  const slow = done.filter((m) => m.podCreatedAt! - m.createSentAt! >= p99Ms).map((m) => ({ startMs: m.createSentAt! - offsetMs, endMs: m.podCreatedAt! - offsetMs }));
  const brief = (f: PauseFigures | undefined) => {
    if (!f) return undefined;
    const { stalls, ...rest } = f;
    return { ...rest, stallCount: stalls.length, longestStallsMs: stalls.slice(0, 5).map((x) => x.ms) };
  };
  return {
    pipeline: brief(pauses.pipeline),
    cluster: brief(pauses.cluster),
    slowVmis: slow.length,
    slowOverlappingPipelineStall: shareOverlapping(slow, pauses.pipeline.stalls),
    slowOverlappingClusterStall: pauses.cluster ? shareOverlapping(slow, pauses.cluster.stalls) : undefined,
    slowOverlappingAnyStall: shareOverlapping(slow, [...pauses.pipeline.stalls, ...(pauses.cluster?.stalls ?? [])]),
  };
}

/** How a burst ends: all Scheduled (the default), or all Running too; with memory figures or not. */
export interface BurstOptions {
  readonly untilRunning?: boolean;
  /** Wall ms the wait for all Scheduled (then all Running) may take; default 300 s. */
  readonly timeoutMs?: number;
}

export async function burstRun(name: SystemName, N: number, controlPlane: ControlPlane = 'emulator', opts: BurstOptions = {}) {
  say(`${name} (${controlPlane}): throughput — ${N} VMIs at once`);
  const timeoutMs = opts.timeoutMs ?? 300_000;
  const cluster = await startCluster({ vmis: N, controlPlane, identities: IDENTITIES });
  const tracker = new VmiTracker(cluster);
  const sys = await startSystem(name, cluster);
  const profiler = new CpuProfiler();
  // Resident memory before the creates, once the system has started: what the run adds is per VMI.
  const rssBefore = process.memoryUsage().rss;
  const clusterRssBefore = await cluster.rssBytes?.();
  // The heap retained after a full GC, only when memory is reported (a forced GC is a pause).
  const heapBefore = opts.untilRunning ? retainedHeapBytes() : 0;
  const clusterHeapBefore = opts.untilRunning ? await cluster.heapBytes?.() : undefined;
  try {
    const names = vmiNames('burst', N);
    await profiler.start();
    await cluster.profile?.start();
    const before = controllerFigures(sys.metrics);
    const countersBefore = await cluster.counters();
    const cpuBefore = process.cpuUsage();
    const clusterCpuBefore = await cluster.cpuMicros?.();
    const t0 = cluster.nowMs();
    await createVmis(cluster, tracker, names, { concurrency: 50 });
    const createdIn = cluster.nowMs() - t0;
    say(`${name}: ${N} created in ${round(createdIn / 1000, 1)} s`);
    const ok = await waitUntil(() => tracker.count((m) => m.scheduledAt !== undefined) >= N, timeoutMs, () => say(`${name}: ${tracker.count((m) => m.scheduledAt !== undefined)}/${N} Scheduled`));
    const cpu = await profiler.stop();
    const clusterCpu = await cluster.profile?.stop();
    const after = controllerFigures(sys.metrics);
    const countersAfter = await cluster.counters();
    const cpuUsed = process.cpuUsage(cpuBefore);
    const clusterCpuAfter = await cluster.cpuMicros?.();
    // How much of the lifecycle the window to all Scheduled held: in a long burst the first VMIs
    // go on to Running (and their passes and writes count) before the last one is Scheduled.
    const runningWhenAllScheduled = tracker.count((m) => m.runningAt !== undefined);
    let running: Record<string, unknown> | undefined;
    if (opts.untilRunning) {
      const runningOk = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, timeoutMs, () => say(`${name}: ${tracker.count((m) => m.runningAt !== undefined)}/${N} Running`));
      const lastRunning = Math.max(...[...tracker.vmis.values()].map((m) => m.runningAt ?? 0));
      const pipelineRss = process.memoryUsage().rss;
      const clusterRss = await cluster.rssBytes?.();
      const toRunningCpu = process.cpuUsage(cpuBefore);
      const clusterCpuRunning = await cluster.cpuMicros?.();
      // After the CPU figures: the forced collections are the measurement's, not the run's.
      const pipelineHeap = retainedHeapBytes();
      const clusterHeap = await cluster.heapBytes?.();
      const atRunning = controllerFigures(sys.metrics);
      // A Prometheus scrape of the runtime's /metrics with every VMI known (KubeVirt's collectors included).
      const scrape = name === 'serverless' ? scrapeCost(sys.metrics) : undefined;
      running = {
        ...(scrape ? { scrape } : {}),
        allRunning: runningOk,
        secondsToAllRunning: round((lastRunning - t0) / 1000),
        vmisPerSecondRunning: round(N / ((lastRunning - t0) / 1000), 1),
        // The whole lifecycle per VMI, create → Running: the like-for-like cost at any N.
        perVmiToRunning: {
          pipelineCpuMs: round((toRunningCpu.user + toRunningCpu.system) / 1000 / N, 1),
          ...(clusterCpuBefore !== undefined && clusterCpuRunning !== undefined ? { clusterCpuMs: round((clusterCpuRunning - clusterCpuBefore) / 1000 / N, 1) } : {}),
          apiCallsByController: perVmi(atRunning.calls, before.calls, N),
          reconcilesByController: perVmi(atRunning.reconciles, before.reconciles, N),
        },
        // Memory per VMI, the system under test's process and the cluster's: the JS heap retained
        // after a full GC that the run added (what each VMI holds), and resident memory. The
        // system's RSS before the run still holds the earlier benchmarks' freed heap (one process
        // runs every file), so its RSS difference is not a per-VMI figure; the cluster's process
        // is fresh, so its is.
        pipelineHeapKbPerVmi: round((pipelineHeap - heapBefore) / 1024 / N, 1),
        pipelineRssMb: round(pipelineRss / 2 ** 20, 1),
        pipelineRssKbPerVmi: round((pipelineRss - rssBefore) / 1024 / N, 1),
        ...(clusterHeap !== undefined && clusterHeapBefore !== undefined ? { clusterHeapKbPerVmi: round((clusterHeap - clusterHeapBefore) / 1024 / N, 1) } : {}),
        ...(clusterRss !== undefined && clusterRssBefore !== undefined ? { clusterRssMb: round(clusterRss / 2 ** 20, 1), clusterKbPerVmi: round((clusterRss - clusterRssBefore) / 1024 / N, 1) } : {}),
      };
    }
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
      runningWhenAllScheduled,
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
      ...(running ? { running } : {}),
      // What grows with N shows here first: per VMI, each controller's calls and reconciles, and the
      // most frequent calls by controller, verb and resource (a list per VMI is O(N) per VMI).
      perVmiToScheduled: {
        // CPU time (user + system) to all Scheduled: the steadier figure on a shared machine.
        pipelineCpuMs: round((cpuUsed.user + cpuUsed.system) / 1000 / N, 1),
        ...(clusterCpuBefore !== undefined && clusterCpuAfter !== undefined ? { clusterCpuMs: round((clusterCpuAfter - clusterCpuBefore) / 1000 / N, 1) } : {}),
        apiCallsByController: perVmi(after.calls, before.calls, N),
        reconcilesByController: perVmi(after.reconciles, before.reconciles, N),
        topCalls: perVmi(after.callsByVerb, before.callsByVerb, N, 12),
        // Every identity's lists and watches as the API server counted them (the node side, the
        // relay and the bench too): a relist of a whole collection shows here.
        listsAndWatches: perVmi(requestTotals(countersAfter, ['list', 'watch']), requestTotals(countersBefore, ['list', 'watch']), N, 12),
        // Everything the API server served per VMI, by identity, verb and resource: the cluster's
        // load from each side (the system under test, the node side, the bench's own creates).
        serverRequests: perVmi(requestTotals(countersAfter, undefined), requestTotals(countersBefore, undefined), N, 25),
      },
      sandboxPlacement: cluster.placement,
      // With the cluster in a process of its own, each process has its own profile (and core).
      cpuProfile: clusterCpu ? { pipeline: cpu, cluster: clusterCpu } : cpu,
    };
    say(`${name}: ${figures.vmisPerSecondScheduled} VMIs/s to Scheduled; queue wait ${avg.queueWaitAvgMs} ms, reconcile ${avg.reconcileAvgMs} ms avg`);
    say(`${name}: per VMI to Scheduled, CPU ${figures.perVmiToScheduled.pipelineCpuMs} ms (system) + ${figures.perVmiToScheduled.clusterCpuMs ?? '?'} ms (cluster), calls ${JSON.stringify(figures.perVmiToScheduled.apiCallsByController)}, reconciles ${JSON.stringify(figures.perVmiToScheduled.reconcilesByController)}`);
    return figures;
  } finally {
    await sys.stop();
    tracker.stop();
    await cluster.stop();
  }
}
