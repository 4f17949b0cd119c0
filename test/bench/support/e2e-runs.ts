/**
 * The e2e benchmark's runs (e2e.bench.ts and scale.bench.ts): one system against a fresh cluster —
 * a steady-rate latency run and a burst — with the figures each reports. Every run also reports
 * `controller`: the same figures for any system, ours or KubeVirt's virt-controller, taken from
 * outside it — times from the API server's writes, the system's requests as the API server
 * counted them, its process's CPU (and, in a burst to Running, its memory).
 */
import { scrapeCost } from './scrape-cost.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';
import { controllerFigures, perVmi } from './controller-figures.ts';
import { CpuProfiler } from './cpu-profile.ts';
import { PauseMonitor } from './pauses.ts';
import { startCluster, type BenchCluster } from './cluster.ts';
import { identityRequests } from './identity-requests.ts';
import { apiFigures, controllerCpuMicros, pauseSummary, requestTotals, round, vmiMetrics } from './run-figures.ts';
import { BENCH_IDENTITIES, startSystem, type RunningSystem, type SystemName } from './systems.ts';
import { createVmis, USER_IDENTITY, vmiNames, VmiTracker, waitUntil } from './vmi-run.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { VMIS } from '../../../shared/api/resources.ts';
import { conditionsText } from '../../support/conditions-text.ts';
import { retainedHeapBytes } from './retained-heap.ts';
import { percentile } from './stats.ts';
import type { GoProfileSummary } from './control-plane-profile.ts';

export { round } from './run-figures.ts';

/**
 * Steady-rate creates per second (BENCH_RATE, default 10): well below what either system
 * reconciles on this machine (a burst reaches 26–29/s), so the figure is event latency, not
 * queueing, and three pairs of 1,000 VMIs fit the bench's time budget.
 */
export const DEFAULT_RATE = Number(process.env.BENCH_RATE ?? 10);
/** After the last VMI is Running: trailing status writes settle before the requests are counted. */
const SETTLE_MS = 2000;

/** A progress line, with the time since the benchmark process started ([m:ss]). */
export function say(line: string): void {
  const s = Math.round(performance.now() / 1000);
  process.stdout.write(`  [${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}] ${line}\n`);
}

/** A fresh cluster for N VMIs with `name` started on it (the cluster stopped again if the system does not start). */
export async function startRun(name: SystemName, N: number, controlPlane: ControlPlane, extra: { pprof?: boolean; replicaSets?: boolean } = {}): Promise<{ cluster: BenchCluster; sys: RunningSystem }> {
  const cluster = await startCluster({ vmis: N, controlPlane, identities: BENCH_IDENTITIES, ...(extra.pprof ? { pprof: true } : {}) });
  try {
    const sys = await startSystem(name, cluster, extra.replicaSets ? { replicaSets: true } : {});
    // Which way KubeVirt's reached the API server: through KubeVirt's apishim (emulator) or directly.
    if (sys.external) say(`${name}: virt-controller (pid ${sys.external.pid}) leads; API server: ${sys.external.apiPath}`);
    return { cluster, sys };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** KubeVirt's virt-controller's own figures: how it reached the API server, what it logged, the shim's CPU. */
export function externalFigures(sys: RunningSystem, N: number, shimCpuBefore: number) {
  if (!sys.external) return undefined;
  return {
    apiPath: sys.external.apiPath,
    shimCpuMsPerVmi: round((sys.external.shimCpuMicros() - shimCpuBefore) / 1000 / N, 2),
    logFindings: sys.external.findings().slice(0, 12),
  };
}

/** Where a VMI that never reached Running stopped: its phase, node, labels of note and conditions (a run's figures are no use without it). */
async function whereStopped(cluster: BenchCluster, tracker: VmiTracker): Promise<string> {
  const name = [...tracker.vmis.entries()].find(([, m]) => m.runningAt === undefined)?.[0];
  if (!name) return 'every VMI Running after all';
  const v = await createKubeClient(cluster.kubeConfig(USER_IDENTITY)).get(VMIS, 'default', name).catch((err: unknown) => String(err));
  if (typeof v === 'string' || !v) return `${name}: ${v ?? 'gone'}`;
  return `${name}: ${v.status?.phase} on ${v.status?.nodeName ?? '-'}, label kubevirt.io/nodeName ${v.metadata?.labels?.['kubevirt.io/nodeName'] ?? '-'}, conditions [${conditionsText(v.status?.conditions)}]`;
}

export async function latencyRun(name: SystemName, N: number, controlPlane: ControlPlane = 'emulator', RATE = DEFAULT_RATE) {
  say(`${name} (${controlPlane}): latency — ${N} VMIs at ${RATE}/s`);
  const { cluster, sys } = await startRun(name, N, controlPlane);
  const tracker = new VmiTracker(cluster);
  const pipelinePauses = new PauseMonitor();
  try {
    const names = vmiNames('lat', N);
    const countersBefore = await cluster.counters();
    const cpuBefore = controllerCpuMicros(sys);
    const shimBefore = sys.external?.shimCpuMicros() ?? 0;
    pipelinePauses.start();
    await cluster.pauses?.start();
    await createVmis(cluster, tracker, names, { ratePerSec: RATE, onProgress: (d) => d % 250 === 0 && say(`${name}: ${d}/${N} created, ${tracker.count((m) => m.podCreatedAt !== undefined)} pods`) });
    const podsOk = await waitUntil(() => tracker.count((m) => m.podCreatedAt !== undefined) >= N, 120_000, () => say(`${name}: ${tracker.count((m) => m.podCreatedAt !== undefined)}/${N} pods`));
    const runningOk = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, 180_000, () => say(`${name}: ${tracker.count((m) => m.runningAt !== undefined)}/${N} Running`));
    if (!runningOk) say(`${name}: not all Running; ${await whereStopped(cluster, tracker)}`);
    const pauses = { pipeline: pipelinePauses.stop(), cluster: await cluster.pauses?.stop() };
    // Let trailing reconciles (the Running status sync) finish before counting.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const cpuUsed = controllerCpuMicros(sys) - cpuBefore;
    const requests = identityRequests(countersBefore, await cluster.counters(), sys.identity, N);
    const done = [...tracker.vmis.values()].filter((m) => m.podCreatedAt !== undefined && m.createSentAt !== undefined);
    const ms = done.map((m) => m.podCreatedAt! - m.createSentAt!);
    const common = {
      vmis: N,
      ratePerSec: RATE,
      allPodsCreated: podsOk,
      allRunning: runningOk,
      eventToPodP50Ms: percentile(ms, 0.5),
      eventToPodP99Ms: percentile(ms, 0.99),
      eventToPodMaxMs: percentile(ms, 1),
      duplicatePods: tracker.count((m) => m.podCreates > 1),
      // First create → all Running, the system's requests and its process's CPU, per VMI.
      controller: { requests, cpuMsPerVmi: round(cpuUsed / 1000 / N, 2) },
      pauses: pauseSummary(pauses, done, percentile(ms, 0.99), cluster.nowMs() - Date.now()),
    };
    say(`${name}: p50 ${common.eventToPodP50Ms} ms, p99 ${common.eventToPodP99Ms} ms, ${requests.requestsPerVmi} requests/VMI (${requests.writesPerVmi} writes), CPU ${common.controller.cpuMsPerVmi} ms/VMI`);
    if (sys.external) return { ...common, kubevirt: externalFigures(sys, N, shimBefore) };
    const m = vmiMetrics(sys);
    const { calls: _calls, ...avg } = m;
    const figures = {
      ...common,
      ...avg,
      apiCallAvgMs: round(sys.apiTimer.totalMs / Math.max(1, sys.apiTimer.calls), 2),
      failedReconciles: sys.failed,
      // Expectations calls per reconcile of any controller (the serverless path's table; 0 for the baseline's memory).
      tableReadsPerReconcile: round(sys.table.reads / Math.max(1, m.allControllersReconciles)),
      tableWritesPerReconcile: round(sys.table.writes / Math.max(1, m.allControllersReconciles)),
      api: await apiFigures(cluster, sys.identity, m, N),
    };
    say(`${name}: ${figures.api.reconcilesPerVmi} reconciles/VMI, ${figures.api.controllerWritesPerVmi} VMI controller writes/VMI`);
    return figures;
  } finally {
    await sys.stop();
    tracker.stop();
    await cluster.stop();
  }
}

/** How a burst ends: all Scheduled (the default), or all Running too; with memory figures or not. */
export interface BurstOptions {
  readonly untilRunning?: boolean;
  /** Wall ms the wait for all Scheduled (then all Running) may take; default 300 s. */
  readonly timeoutMs?: number;
}

/**
 * BENCH_CPU_PROFILE_DIR on the real control plane: Go CPU profiles of its processes during the
 * burst (support/control-plane-profile.ts), beside the V8 profiles of ours.
 */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;

export async function burstRun(name: SystemName, N: number, controlPlane: ControlPlane = 'emulator', opts: BurstOptions = {}) {
  say(`${name} (${controlPlane}): throughput — ${N} VMIs at once${opts.untilRunning ? ', to Running' : ''}`);
  const timeoutMs = opts.timeoutMs ?? 300_000;
  const goProfiles = controlPlane === 'real' && PROFILE_DIR !== undefined;
  const { cluster, sys } = await startRun(name, N, controlPlane, { pprof: goProfiles });
  const tracker = new VmiTracker(cluster);
  const profiler = new CpuProfiler();
  // Resident memory before the creates, once the system has started: what the run adds is per VMI.
  const rssBefore = process.memoryUsage().rss;
  const clusterRssBefore = await cluster.rssBytes?.();
  const externalMemoryBefore = sys.external?.memory();
  // The heap retained after a full GC, only when memory is reported (a forced GC is a pause).
  const heapBefore = opts.untilRunning ? retainedHeapBytes() : 0;
  const clusterHeapBefore = opts.untilRunning ? await cluster.heapBytes?.() : undefined;
  try {
    const names = vmiNames('burst', N);
    await profiler.start();
    await cluster.profile?.start();
    if (goProfiles) await cluster.controlPlaneProfile?.start(PROFILE_DIR);
    const before = controllerFigures(sys.metrics);
    const countersBefore = await cluster.counters();
    const cpuBefore = process.cpuUsage();
    const controllerCpuBefore = controllerCpuMicros(sys);
    const shimBefore = sys.external?.shimCpuMicros() ?? 0;
    const clusterCpuBefore = await cluster.cpuMicros?.();
    const t0 = cluster.nowMs();
    await createVmis(cluster, tracker, names, { concurrency: 50 });
    const createdIn = cluster.nowMs() - t0;
    say(`${name}: ${N} created in ${round(createdIn / 1000, 1)} s`);
    const ok = await waitUntil(() => tracker.count((m) => m.scheduledAt !== undefined) >= N, timeoutMs, () => say(`${name}: ${tracker.count((m) => m.scheduledAt !== undefined)}/${N} Scheduled`));
    const cpu = await profiler.stop();
    const clusterCpu = await cluster.profile?.stop();
    const controlPlaneProfile: Record<string, GoProfileSummary> | undefined = goProfiles ? await cluster.controlPlaneProfile?.stop() : undefined;
    const after = controllerFigures(sys.metrics);
    const countersAfter = await cluster.counters();
    const cpuUsed = process.cpuUsage(cpuBefore);
    const controllerCpuScheduled = controllerCpuMicros(sys);
    const clusterCpuAfter = await cluster.cpuMicros?.();
    // How much of the lifecycle the window to all Scheduled held: in a long burst the first VMIs
    // go on to Running (and their passes and writes count) before the last one is Scheduled.
    const runningWhenAllScheduled = tracker.count((m) => m.runningAt !== undefined);
    const lastCreate = t0 + createdIn;
    const lastScheduled = Math.max(...[...tracker.vmis.values()].map((m) => m.scheduledAt ?? 0));
    let running: Record<string, unknown> | undefined;
    let controllerToRunning: Record<string, unknown> | undefined;
    if (opts.untilRunning) {
      const runningOk = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, timeoutMs, () => say(`${name}: ${tracker.count((m) => m.runningAt !== undefined)}/${N} Running`));
      if (!runningOk) say(`${name}: not all Running; ${await whereStopped(cluster, tracker)}`);
      const lastRunning = Math.max(...[...tracker.vmis.values()].map((m) => m.runningAt ?? 0));
      const pipelineRss = process.memoryUsage().rss;
      const clusterRss = await cluster.rssBytes?.();
      const toRunningCpu = process.cpuUsage(cpuBefore);
      const controllerCpuRunning = controllerCpuMicros(sys);
      const clusterCpuRunning = await cluster.cpuMicros?.();
      const externalMemory = sys.external?.memory();
      // After the CPU figures: the forced collections are the measurement's, not the run's.
      const pipelineHeap = retainedHeapBytes();
      const clusterHeap = await cluster.heapBytes?.();
      const atRunning = controllerFigures(sys.metrics);
      // A Prometheus scrape of the runtime's /metrics with every VMI known (KubeVirt's collectors included).
      const scrape = name === 'serverless' ? scrapeCost(sys.metrics) : undefined;
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const requests = identityRequests(countersBefore, await cluster.counters(), sys.identity, N);
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
      controllerToRunning = {
        secondsToAllRunning: round((lastRunning - t0) / 1000),
        lagAfterLastCreateRunningS: round((lastRunning - lastCreate) / 1000),
        vmisPerSecondRunning: round(N / ((lastRunning - t0) / 1000), 1),
        // First create → all Running (+ a settle): every request of the system's identity.
        requests,
        cpuMsPerVmi: round((controllerCpuRunning - controllerCpuBefore) / 1000 / N, 2),
        // Ours: the JS heap retained after a full GC that the run added (the process holds the
        // benchmark too). KubeVirt's (Go, not collected on demand): its resident memory's growth,
        // and its peak resident size.
        memory: sys.external && externalMemoryBefore && externalMemory
          ? { measure: 'RSS growth (/proc VmRSS)', kbPerVmi: round((externalMemory.rssBytes - externalMemoryBefore.rssBytes) / 1024 / N, 1), peakRssMb: round(externalMemory.hwmBytes / 2 ** 20, 1) }
          : { measure: 'retained JS heap', kbPerVmi: round((pipelineHeap - heapBefore) / 1024 / N, 1), peakRssMb: round(pipelineRss / 2 ** 20, 1) },
      };
    }
    const seconds = (lastScheduled - t0) / 1000;
    const toPod = [...tracker.vmis.values()].filter((m) => m.podCreatedAt !== undefined).map((m) => m.podCreatedAt! - m.createSentAt!);
    const controller = {
      secondsToAllScheduled: round(seconds),
      lagAfterLastCreateScheduledS: round((lastScheduled - lastCreate) / 1000),
      vmisPerSecondScheduled: round(N / seconds, 1),
      cpuMsPerVmiToScheduled: round((controllerCpuScheduled - controllerCpuBefore) / 1000 / N, 2),
      ...controllerToRunning,
    };
    const common = {
      vmis: N,
      allScheduled: ok,
      createSeconds: round(createdIn / 1000),
      secondsToAllScheduled: round(seconds),
      vmisPerSecondScheduled: round(N / seconds, 1),
      runningWhenAllScheduled,
      eventToPodP50Ms: percentile(toPod, 0.5),
      eventToPodP99Ms: percentile(toPod, 0.99),
      duplicatePods: tracker.count((m) => m.podCreates > 1),
      controller,
      ...(running ? { running } : {}),
      sandboxPlacement: cluster.placement,
      ...(controlPlaneProfile ? { controlPlaneProfile } : {}),
    };
    const serverRequests = {
      ...(clusterCpuBefore !== undefined && clusterCpuAfter !== undefined ? { clusterCpuMs: round((clusterCpuAfter - clusterCpuBefore) / 1000 / N, 1) } : {}),
      // Every identity's lists and watches as the API server counted them (the node side, the
      // relay and the bench too): a relist of a whole collection shows here.
      listsAndWatches: perVmi(requestTotals(countersAfter, ['list', 'watch']), requestTotals(countersBefore, ['list', 'watch']), N, 12),
      // Everything the API server served per VMI, by identity, verb and resource: the cluster's
      // load from each side (the system under test, the node side, the bench's own creates).
      serverRequests: perVmi(requestTotals(countersAfter, undefined), requestTotals(countersBefore, undefined), N, 25),
    };
    say(`${name}: to all Scheduled ${controller.secondsToAllScheduled} s (${controller.lagAfterLastCreateScheduledS} s after the last create)${controllerToRunning ? `, to all Running ${String(controllerToRunning.secondsToAllRunning)} s (${String(controllerToRunning.lagAfterLastCreateRunningS)} s after); ${(controllerToRunning.requests as { requestsPerVmi: number }).requestsPerVmi} requests/VMI` : ''}; CPU ${controller.cpuMsPerVmiToScheduled} ms/VMI to Scheduled`);
    for (const [component, p] of Object.entries(controlPlaneProfile ?? {})) say(`${name}: control plane ${component}: ${p.cpuSeconds} CPU s in ${p.seconds} s${p.error ? ` (${p.error})` : ''}; top: ${Object.entries(p.topFlat).slice(0, 5).map(([f, pct]) => `${f} ${pct}%`).join(', ')}`);
    if (sys.external) return { ...common, perVmiToScheduled: serverRequests, kubevirt: externalFigures(sys, N, shimBefore) };
    const { calls: _calls, ...avg } = vmiMetrics(sys);
    const figures = {
      ...common,
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
      // What grows with N shows here first: per VMI, each controller's calls and reconciles, and the
      // most frequent calls by controller, verb and resource (a list per VMI is O(N) per VMI).
      perVmiToScheduled: {
        // CPU time (user + system) to all Scheduled: the steadier figure on a shared machine.
        pipelineCpuMs: round((cpuUsed.user + cpuUsed.system) / 1000 / N, 1),
        apiCallsByController: perVmi(after.calls, before.calls, N),
        reconcilesByController: perVmi(after.reconciles, before.reconciles, N),
        topCalls: perVmi(after.callsByVerb, before.callsByVerb, N, 12),
        ...serverRequests,
      },
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
