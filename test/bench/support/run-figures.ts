/**
 * The figures the e2e runs (e2e-runs.ts) derive from a run: the VMI controller's from our
 * systems' metrics, the API calls of the system's identity as the API server counted them, what
 * the processes' pauses looked like, and the controller's own CPU and memory — ours in the
 * benchmark's process, KubeVirt's virt-controller in its own (from /proc).
 */
import type { RequestCount } from '../../../sandbox/apiserver/counters.ts';
import type { BenchCluster } from './cluster.ts';
import { shareOverlapping, type PauseFigures } from './pauses.ts';
import type { RunningSystem } from './systems.ts';
import type { VmiMilestones } from './vmi-run.ts';
import { retainedHeapBytes } from './retained-heap.ts';

export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Request counts summed by identity, verb and resource; `verbs` undefined = every verb. */
export function requestTotals(counts: readonly RequestCount[], verbs: readonly string[] | undefined): Record<string, number> {
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
export function vmiMetrics(sys: RunningSystem) {
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

export interface ApiFigures {
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

export async function apiFigures(cluster: BenchCluster, identity: string, m: ReturnType<typeof vmiMetrics>, N: number): Promise<ApiFigures> {
  const identityPerVmi: Record<string, number> = {};
  const clusterWideCalls: Record<string, number> = {};
  for (const c of await cluster.counters()) {
    if (c.identity !== identity) continue;
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

/**
 * What the two processes were doing while the slowest VMIs waited: each process's loop delay, GC
 * pauses and stalls, and the share of the VMIs at or above the p99 whose create → pod window
 * overlaps a stall of the pipeline, of the cluster, or of either. `offsetMs` maps the sandbox
 * clock to the wall clock the monitors use (sandbox = wall + offset).
 */
export function pauseSummary(
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


/** The controller's CPU time so far, µs: KubeVirt's process's, or this process's (ours run in it, beside the benchmark's own creates and tracking). */
export function controllerCpuMicros(sys: RunningSystem): number {
  if (sys.external) return sys.external.cpuMicros();
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Where the controller's memory stood before a measured window (see {@link controllerMemoryPer}). */
export interface MemoryMark {
  readonly heapBytes: number;
  readonly external?: { rssBytes: number; hwmBytes: number };
}

/** The controller's memory now: KubeVirt's resident memory, or this process's JS heap retained after a full GC (a pause: take it outside timed windows). */
export function controllerMemoryMark(sys: RunningSystem): MemoryMark {
  const external = sys.external?.memory();
  return external ? { heapBytes: 0, external } : { heapBytes: retainedHeapBytes() };
}

/**
 * What the window from `before` added per item (replica, moved VMI), as the e2e burst reports it:
 * KubeVirt's RSS growth (Go, not collected on demand) and peak, or our retained heap and RSS.
 * Different measures, side by side; neither is the other's.
 */
export function controllerMemoryPer(sys: RunningSystem, before: MemoryMark, n: number): { measure: string; kbPerItem: number; peakRssMb: number } {
  const now = controllerMemoryMark(sys);
  if (now.external && before.external) return { measure: 'RSS growth (/proc VmRSS)', kbPerItem: round((now.external.rssBytes - before.external.rssBytes) / 1024 / n, 1), peakRssMb: round(now.external.hwmBytes / 2 ** 20, 1) };
  return { measure: 'retained JS heap', kbPerItem: round((now.heapBytes - before.heapBytes) / 1024 / n, 1), peakRssMb: round(process.memoryUsage().rss / 2 ** 20, 1) };
}
