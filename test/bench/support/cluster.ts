/**
 * The cluster a benchmark runs against, wherever it runs: by default the sandbox (API server and
 * node side) in a child process of its own, so that the system under test and the cluster each
 * have one of the machine's cores (BENCH_SANDBOX=inprocess keeps the old single-process set-up,
 * for a before/after). Both give the same view: kubeconfigs per identity, the sandbox clock, the
 * audit log's milestones and the request counters.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { AuditEntry, FaultCode, FaultMatch, RequestCount } from '../../../sandbox/apiserver/index.ts';
import type { Sandbox } from '../../../sandbox/sandbox.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';
import type { CpuFigures } from './cpu-profile.ts';
import type { GoProfileSummary } from './control-plane-profile.ts';
import type { PauseFigures } from './pauses.ts';
import { milestoneOf, type Milestone } from './milestones.ts';
import type { ChildRequest, ChildMessage, ClusterSpec } from './cluster-child.ts';

export type { ClusterSpec } from './cluster-child.ts';

/** Where the cluster runs. */
export type ClusterPlacement = 'child process' | 'in process';

/** A running benchmark cluster; see the module comment. */
export interface BenchCluster {
  readonly placement: ClusterPlacement;
  readonly controlPlane: ControlPlane;
  readonly nodeNames: readonly string[];
  /** A kubeconfig whose requests the sandbox attributes to `identity` (one of {@link ClusterSpec.identities}). */
  kubeConfig(identity: string): KubeConfig;
  /** The sandbox clock (epoch ms); in a child process, the child's clock read through a measured offset. */
  nowMs(): number;
  /** Every milestone from now on; returns the unsubscribe. */
  onMilestone(cb: (m: Milestone) => void): () => void;
  /** The API server's request counters (identity, verb, resource, namespace). */
  counters(): Promise<RequestCount[]>;
  /** The cluster's own CPU profile, when it runs in a process of its own. */
  readonly profile?: { start(): Promise<void>; stop(): Promise<CpuFigures> };
  /**
   * Go CPU profiles of the real control plane's processes (kube-apiserver, etcd's, the controller
   * manager's, the scheduler's) into a directory, summarised at stop; only when the cluster was
   * started with `pprof` on the real control plane.
   */
  readonly controlPlaneProfile?: { start(dir: string): Promise<void>; stop(): Promise<Record<string, GoProfileSummary>> };
  /** The cluster process's loop delay, GC pauses and stalls (child process only). */
  readonly pauses?: { start(): Promise<void>; stop(): Promise<PauseFigures> };
  /** Its process's resident memory, bytes (child process only). */
  rssBytes?(): Promise<number>;
  /** The JS heap retained after a full GC (retained-heap.ts). */
  heapBytes?(): Promise<number>;
  /** Its process's CPU time so far (user + system), µs (child process only). */
  cpuMicros?(): Promise<number>;
  /** The storage side's virt-api subresource server, when the sandbox runs it. */
  readonly virtApiUrl?: string;
  /** The emulator's fault hooks (sandbox/apiserver/faults.ts), wherever it runs. */
  readonly faults: ClusterFaults;
  /** The audit log's entries since the last drain, which the cluster then drops. */
  drainAudit(): Promise<AuditEntry[]>;
  stop(): Promise<void>;
}

/** The emulator's fault hooks as the chaos loop drives them (injectors.ts). */
export interface ClusterFaults {
  dropWatches(): Promise<void>;
  /** The watch history gone: a re-watch from an older resourceVersion answers 410. */
  compactHistory(): Promise<void>;
  failNext(code: FaultCode, count: number, match: FaultMatch): Promise<void>;
  /** Injected failures not yet taken by a request. */
  remaining(): Promise<number>;
  /** Every pending failure and latency removed. */
  clear(): Promise<void>;
}

/** BENCH_SANDBOX: `child` (default) or `inprocess`. */
export function placementFromEnv(): ClusterPlacement {
  const v = process.env.BENCH_SANDBOX ?? 'child';
  if (v === 'child') return 'child process';
  if (v === 'inprocess') return 'in process';
  throw new Error(`BENCH_SANDBOX=${v}: expected child or inprocess`);
}

/** Starts a cluster for `spec` where BENCH_SANDBOX says (or `placement`). */
export async function startCluster(spec: ClusterSpec, placement: ClusterPlacement = placementFromEnv()): Promise<BenchCluster> {
  if (placement === 'child process') return startClusterProcess(spec);
  const { startBenchSandbox } = await import('./cluster-child.ts');
  return inProcessCluster(await startBenchSandbox(spec));
}

/** A view of a sandbox started in this process. */
export function inProcessCluster(sandbox: Sandbox): BenchCluster {
  return {
    placement: 'in process',
    controlPlane: sandbox.controlPlane,
    nodeNames: sandbox.nodeNames,
    kubeConfig: (identity) => sandbox.apiServer.kubeConfig(identity),
    nowMs: () => sandbox.clock.nowMs(),
    onMilestone(cb) {
      return sandbox.apiServer.audit.subscribe((e) => {
        const m = milestoneOf(e);
        if (m) cb(m);
      });
    },
    counters: async () => sandbox.apiServer.counters.snapshot(),
    ...(inProcessProfile(sandbox) ?? {}),
    ...(sandbox.storage ? { virtApiUrl: sandbox.storage.virtApi.url } : {}),
    faults: {
      dropWatches: async () => void sandbox.apiServer.faults.dropWatches(),
      compactHistory: async () => sandbox.apiServer.control.compactHistory(),
      failNext: async (code, count, match) => sandbox.apiServer.faults.failNext(code, count, match),
      remaining: async () => sandbox.apiServer.faults.remaining(),
      clear: async () => sandbox.apiServer.faults.clear(),
    },
    async drainAudit() {
      const entries = sandbox.apiServer.audit.query();
      sandbox.apiServer.audit.clear();
      return entries;
    },
    stop: () => sandbox.stop(),
  };
}

/** A request to the child without its id (each member of the union on its own). */
type ChildRequestBody = ChildRequest extends infer R ? (R extends ChildRequest ? Omit<R, 'id'> : never) : never;

/** The in-process cluster's control-plane profiler, when it serves pprof. */
function inProcessProfile(sandbox: Sandbox): Pick<BenchCluster, 'controlPlaneProfile'> | undefined {
  if (!(sandbox.apiServer as { pprof?: unknown }).pprof) return undefined;
  let profiler: ReturnType<typeof import('./cluster-child.ts').controlPlaneProfiler> | undefined;
  return {
    controlPlaneProfile: {
      async start(dir) {
        const { controlPlaneProfiler } = await import('./cluster-child.ts');
        profiler = controlPlaneProfiler(sandbox, dir);
        profiler.start();
      },
      async stop() {
        if (!profiler) throw new Error('no control-plane profile was started');
        return profiler.stop();
      },
    },
  };
}

const CHILD = fileURLToPath(new URL('./cluster-child.ts', import.meta.url));

/** Forks cluster-child.ts, waits for its sandbox, and wraps the IPC channel. */
export async function startClusterProcess(spec: ClusterSpec): Promise<BenchCluster> {
  const child: ChildProcess = fork(CHILD, [], { execArgv: process.execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const listeners = new Set<(m: Milestone) => void>();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let exited: Error | undefined;
  const failAll = (err: Error) => {
    exited = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  let stopRequested = false;
  child.on('exit', (code, signal) => {
    // A cluster that dies mid-run (out of memory, a crash) must say so: its milestones just stop.
    if (!stopRequested) process.stderr.write(`bench sandbox process exited unexpectedly (${signal ?? `code ${code}`})\n`);
    failAll(new Error(`bench sandbox process exited (${signal ?? `code ${code}`})`));
  });
  child.on('error', (err) => failAll(err));
  const ready = new Promise<Extract<ChildMessage, { type: 'ready' }>>((resolve, reject) => {
    child.on('message', (raw) => {
      const msg = raw as ChildMessage;
      if (msg.type === 'ready') resolve(msg);
      else if (msg.type === 'failed') reject(new Error(`bench sandbox failed to start: ${msg.error}`));
      else if (msg.type === 'milestones') for (const m of msg.batch) for (const cb of listeners) cb(m);
      else if (msg.type === 'reply') {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error !== undefined) p?.reject(new Error(msg.error));
        else p?.resolve(msg.value);
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`bench sandbox process exited before it was ready (${signal ?? `code ${code}`})`)));
  });
  const ask = <T>(req: ChildRequestBody): Promise<T> => {
    if (exited) return Promise.reject(exited);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...req, id } as ChildRequest);
    });
  };
  child.send({ type: 'start', id: 0, spec } satisfies ChildRequest);
  let started: Extract<ChildMessage, { type: 'ready' }>;
  try {
    started = await ready;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  // The child's clock runs at the wall clock's speed: one offset, measured now, maps it here.
  const offset = started.clockNowMs - Date.now();
  const configs = new Map<string, KubeConfig>();
  for (const [identity, text] of Object.entries(started.kubeconfigs)) {
    const kc = new KubeConfig();
    kc.loadFromString(text);
    configs.set(identity, kc);
  }
  let stopping: Promise<void> | undefined;
  return {
    placement: 'child process',
    controlPlane: started.controlPlane,
    nodeNames: started.nodeNames,
    kubeConfig(identity) {
      const kc = configs.get(identity);
      if (!kc) throw new Error(`bench sandbox: no kubeconfig for identity ${identity} (asked for: ${[...configs.keys()].join(', ')})`);
      return kc;
    },
    nowMs: () => Date.now() + offset,
    onMilestone(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    counters: () => ask<RequestCount[]>({ type: 'counters' }),
    profile: {
      start: () => ask<void>({ type: 'profile-start' }),
      stop: () => ask<CpuFigures>({ type: 'profile-stop' }),
    },
    ...(spec.pprof && started.controlPlane === 'real'
      ? {
          controlPlaneProfile: {
            start: (dir: string) => ask<void>({ type: 'pprof-start', dir }),
            stop: () => ask<Record<string, GoProfileSummary>>({ type: 'pprof-stop' }),
          },
        }
      : {}),
    pauses: {
      start: () => ask<void>({ type: 'pauses-start' }),
      stop: () => ask<PauseFigures>({ type: 'pauses-stop' }),
    },
    rssBytes: () => ask<number>({ type: 'rss' }),
    heapBytes: () => ask<number>({ type: 'heap' }),
    cpuMicros: () => ask<number>({ type: 'cpu' }),
    ...(started.virtApiUrl ? { virtApiUrl: started.virtApiUrl } : {}),
    faults: {
      dropWatches: () => ask<void>({ type: 'faults-drop-watches' }),
      compactHistory: () => ask<void>({ type: 'faults-compact-history' }),
      failNext: (code, count, match) => ask<void>({ type: 'faults-fail-next', code, count, match }),
      remaining: () => ask<number>({ type: 'faults-remaining' }),
      clear: () => ask<void>({ type: 'faults-clear' }),
    },
    drainAudit: () => ask<AuditEntry[]>({ type: 'audit-drain' }),
    stop() {
      stopRequested = true;
      stopping ??= (async () => {
        if (!exited) await ask<void>({ type: 'stop' }).catch(() => undefined);
        if (child.exitCode === null && child.signalCode === null) {
          const gone = new Promise((r) => child.once('exit', r));
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await gone;
          clearTimeout(timer);
        }
      })();
      return stopping;
    },
  };
}
