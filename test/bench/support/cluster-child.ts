/**
 * The benchmarks' sandbox: {@link startBenchSandbox} sizes one for N VMIs; run as a forked child
 * (cluster.ts), this file starts it in its own process and serves it over the IPC channel —
 * kubeconfigs once, milestones in batches, counters, a CPU profile and its memory on request, and
 * for the chaos soak the emulator's fault hooks and its audit log.
 */
import { fileURLToPath } from 'node:url';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../../sandbox/sandbox.ts';
import type { FaultCode, FaultMatch } from '../../../sandbox/apiserver/index.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';
import type { RequestCount } from '../../../sandbox/apiserver/index.ts';
import type { RealApiServer } from '../../../sandbox/real/control-plane.ts';
import { ControlPlaneProfiler } from './control-plane-profile.ts';
import { inProcessCluster, type BenchCluster } from './cluster.ts';
import { CpuProfiler } from './cpu-profile.ts';
import { PauseMonitor } from './pauses.ts';
import { milestoneOf, type Milestone } from './milestones.ts';
import { retainedHeapBytes } from './retained-heap.ts';

/** What the benchmark asks of its cluster. */
export interface ClusterSpec {
  /** Launcher pods it must have room for (100 per node, plus one node). */
  readonly vmis: number;
  readonly podStartupMs?: number;
  readonly vmiBootMs?: number;
  readonly controlPlane?: ControlPlane;
  /** The identities it hands kubeconfigs out for. */
  readonly identities: readonly string[];
  /** The real control plane serving Go's CPU profiles (its /debug/pprof), for {@link controlPlaneProfiler}. */
  readonly pprof?: boolean;
  /**
   * The sandbox exactly as these options say (the chaos soak's: its nodes, timings, storage side
   * and Event lifetime), instead of one sized for `vmis`. Plain data only: they cross the IPC channel.
   */
  readonly options?: Omit<SandboxOptions, 'clock' | 'random' | 'onError' | 'log'>;
}

/** The sandbox a spec asks for: its own options as given, or one sized for its VMIs. */
async function startSpecSandbox(spec: ClusterSpec): Promise<Sandbox> {
  return spec.options ? startSandbox(spec.options) : startBenchSandbox(spec);
}

/** A sandbox with room for `spec.vmis` launcher pods (110 pods per node) and quick simulated boots. */
export async function startBenchSandbox(spec: Omit<ClusterSpec, 'identities'>): Promise<Sandbox> {
  // The sandbox passes no options to the real control plane: its pprof switch is read from the
  // environment while it starts.
  const pprofWas = process.env.VR_CONTROL_PLANE_PPROF;
  if (spec.pprof) process.env.VR_CONTROL_PLANE_PPROF = '1';
  const sandbox = await startSandbox({
    ...(spec.controlPlane ? { controlPlane: spec.controlPlane } : {}),
    nodes: Math.ceil(spec.vmis / 100) + 1,
    // The tests run the emulator with frozen stored objects (a mutation throws); the benchmarks
    // measure it without the freezing walk.
    freezeObjects: false,
    timings: { podStartupMs: spec.podStartupMs ?? 200, vmiBootMs: spec.vmiBootMs ?? 200 },
  }).finally(() => {
    if (pprofWas === undefined) delete process.env.VR_CONTROL_PLANE_PPROF;
    else process.env.VR_CONTROL_PLANE_PPROF = pprofWas;
  });
  // The benchmarks read the audit log through its subscription (milestones.ts) and never query it,
  // so it keeps no entries: holding the last 100,000 writes, each with its object, was most of the
  // cluster's heap at 10,000 VMIs (1.5 GB) and a fifth of its time in the garbage collector —
  // weight kube-apiserver, which writes its audit log to a file, does not carry. The chaos soak's
  // cluster (`spec.options`) keeps its entries for its drains.
  sandbox.apiServer.audit.limit = 0;
  return sandbox;
}

/** Go CPU profiles of the real control plane's processes into `dir`, or why there are none. */
export function controlPlaneProfiler(sandbox: Sandbox, dir: string): ControlPlaneProfiler {
  const endpoints = (sandbox.apiServer as Partial<RealApiServer>).pprof;
  if (!endpoints) throw new Error(`no control-plane profiles: the ${sandbox.controlPlane} control plane was not started with pprof (the real one with ClusterSpec.pprof)`);
  return new ControlPlaneProfiler(endpoints, dir);
}

/** Parent → child. */
export type ChildRequest =
  | { type: 'start'; id: number; spec: ClusterSpec }
  | { type: 'counters' | 'profile-start' | 'profile-stop' | 'pauses-start' | 'pauses-stop' | 'rss' | 'heap' | 'cpu' | 'stop' | 'pprof-stop'; id: number }
  | { type: 'pprof-start'; id: number; dir: string }
  // The emulator's fault hooks and its audit log (the chaos soak's, rig.ts): each as its method in this process.
  | { type: 'faults-drop-watches' | 'faults-compact-history' | 'faults-remaining' | 'faults-clear' | 'audit-drain'; id: number }
  | { type: 'faults-fail-next'; id: number; code: FaultCode; count: number; match: FaultMatch };

/** Child → parent. */
export type ChildMessage =
  | { type: 'ready'; controlPlane: ControlPlane; nodeNames: string[]; clockNowMs: number; kubeconfigs: Record<string, string>; virtApiUrl?: string }
  | { type: 'failed'; error: string }
  | { type: 'milestones'; batch: Milestone[] }
  | { type: 'reply'; id: number; value?: unknown; error?: string };

/** How often milestones are flushed to the parent: a bound on the delay they add to its view. */
const FLUSH_MS = 20;

/** The sandbox as the parent would see it in its own process, or an error saying the fault hooks are the emulator's. */
function emulatorView(sandbox: Sandbox): BenchCluster {
  if (sandbox.controlPlane !== 'emulator') throw new Error(`the fault hooks are the emulator's; this cluster runs the ${sandbox.controlPlane} control plane`);
  return inProcessCluster(sandbox);
}

async function serve(): Promise<void> {
  let sandbox: Sandbox | undefined;
  let profiler: CpuProfiler | undefined;
  let pauses: PauseMonitor | undefined;
  let goProfiler: ControlPlaneProfiler | undefined;
  let batch: Milestone[] = [];
  const send = (msg: ChildMessage) => process.send?.(msg);
  const flush = setInterval(() => {
    if (batch.length === 0) return;
    send({ type: 'milestones', batch });
    batch = [];
  }, FLUSH_MS);
  const answer = async (req: ChildRequest): Promise<unknown> => {
    if (!sandbox) throw new Error('the sandbox is not started');
    switch (req.type) {
      case 'counters':
        return sandbox.apiServer.counters.snapshot() satisfies RequestCount[];
      case 'profile-start':
        profiler = new CpuProfiler();
        return profiler.start();
      case 'profile-stop': {
        if (!profiler) throw new Error('no profile was started');
        const figures = await profiler.stop();
        profiler = undefined;
        return figures;
      }
      case 'pauses-start':
        pauses = new PauseMonitor();
        pauses.start();
        return undefined;
      case 'pauses-stop': {
        if (!pauses) throw new Error('no pause monitor was started');
        const figures = pauses.stop();
        pauses = undefined;
        return figures;
      }
      case 'pprof-start':
        goProfiler = controlPlaneProfiler(sandbox, req.dir);
        goProfiler.start();
        return undefined;
      case 'pprof-stop': {
        if (!goProfiler) throw new Error('no control-plane profile was started');
        const summaries = await goProfiler.stop();
        goProfiler = undefined;
        return summaries;
      }
      case 'rss':
        return process.memoryUsage().rss;
      case 'heap':
        return retainedHeapBytes();
      case 'cpu': {
        // CPU time used so far (user + system), µs: unlike a sampled profile's busy share, not
        // inflated by waiting for a core the machine's other work holds.
        const u = process.cpuUsage();
        return u.user + u.system;
      }
      // The same hooks and drain as a sandbox in the parent's process (cluster.ts, inProcessCluster).
      case 'faults-drop-watches':
        return emulatorView(sandbox).faults.dropWatches();
      case 'faults-compact-history':
        return emulatorView(sandbox).faults.compactHistory();
      case 'faults-remaining':
        return emulatorView(sandbox).faults.remaining();
      case 'faults-clear':
        return emulatorView(sandbox).faults.clear();
      case 'faults-fail-next':
        return emulatorView(sandbox).faults.failNext(req.code, req.count, req.match);
      case 'audit-drain':
        return inProcessCluster(sandbox).drainAudit();
      case 'stop':
        await sandbox.stop();
        clearInterval(flush);
        return undefined;
      default:
        throw new Error(`unknown request ${(req as { type: string }).type}`);
    }
  };
  process.on('message', (raw) => {
    const req = raw as ChildRequest;
    if (req.type === 'start') {
      void (async () => {
        try {
          sandbox = await startSpecSandbox(req.spec);
          const s = sandbox;
          s.apiServer.audit.subscribe((e) => {
            const m = milestoneOf(e);
            if (m) batch.push(m);
          });
          const kubeconfigs = Object.fromEntries(req.spec.identities.map((id) => [id, s.apiServer.kubeConfig(id).exportConfig()]));
          const virtApiUrl = s.storage?.virtApi.url;
          send({ type: 'ready', controlPlane: s.controlPlane, nodeNames: s.nodeNames, clockNowMs: s.clock.nowMs(), kubeconfigs, ...(virtApiUrl ? { virtApiUrl } : {}) });
        } catch (err) {
          send({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
          process.exit(1);
        }
      })();
      return;
    }
    answer(req).then(
      (value) => {
        send({ type: 'reply', id: req.id, value });
        if (req.type === 'stop') process.disconnect();
      },
      (err: unknown) => send({ type: 'reply', id: req.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  // The parent gone (a crashed benchmark) takes the cluster with it.
  process.on('disconnect', () => {
    clearInterval(flush);
    void (sandbox?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) await serve();
