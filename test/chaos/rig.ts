/**
 * A chaos rig: the local runtime's parts — relay, queue and table, every controller's workers —
 * assembled here so each can be wrapped, against a sandbox cluster on either lane, over either
 * backend, under every fault of the chaos suite:
 * - worker kills at any API or table call (injectors.ts), every message delivered up to 5×, a slow
 *   queue, poisoned VMIs;
 * - the API server's faults: on the emulator its hooks (watch drops, 410, 429/500/409); on the
 *   real control plane restarts, etcd compaction, APF starvation (real-faults.ts);
 * - the relay's network stalled and reset, the relay killed and restarted (relay-chaos.ts);
 * - on the AWS backend, throttling, 5xx, timeouts and lost lease extensions (aws-faults.ts).
 * The scenarios (controller-scenarios.ts, soak.ts) drive a cluster through it and check their
 * invariants from the API server's audit log.
 */
import { DEFINITIONS } from '../../functions/registry.ts';
import { WorkerPool } from '../../local/workers.ts';
import { virtApiFor } from '../../local/runtime.ts';
import type { RealApiServer } from '../../sandbox/real/control-plane.ts';
import { PART_IDENTITY } from '../../sandbox/real/identities.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/sandbox.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { asProductCounting } from '../support/as-product.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { Controller } from '../../shared/queue/message.ts';
import { bindController } from '../../shared/reconcile/define-controller.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { REAL } from '../support/lanes.ts';
import { inProcessCluster, startClusterProcess, type BenchCluster, type ClusterFaults } from '../bench/support/cluster.ts';
import { CONTROLLER_IDENTITY, USER_IDENTITY } from '../bench/support/vmi-run.ts';
import { chaosExpectations, chaosKube, DuplicatingSender, Killer, patientUser, seededRandom, startFaultLoop, withoutViewsOf, type FaultLoop } from './injectors.ts';
import { startRealFaultLoop } from './real-faults.ts';
import { startChaosRelay, type ChaosRelay } from './relay-chaos.ts';
import { openChaosStore, type ChaosBackend, type ChaosStore } from './store.ts';

export const RELAY_IDENTITY = 'virt-reconciler-relay';
const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };

/** The identity a part runs as: its own (and its own RBAC role) on the real lane. */
export const identityOf = (part: Controller | 'relay'): string => (REAL ? PART_IDENTITY[part] : part === 'relay' ? RELAY_IDENTITY : CONTROLLER_IDENTITY);

/**
 * The fault loop of the lane: the emulator's hooks, or the real control plane's outages; both
 * with the relay's network and crashes. `apiServerRestarts` caps the real lane's restarts.
 */
export function startLaneFaults(sandbox: Sandbox, random: () => number, relay: ChaosRelay, opts: { apiServerRestarts?: number } = {}): FaultLoop {
  if (sandbox.controlPlane === 'real') {
    const server = sandbox.apiServer as RealApiServer;
    const controllerUsers = DEFINITIONS.map((d) => server.userOf(PART_IDENTITY[d.name]));
    return startRealFaultLoop(server, random, { relay, controllerUsers, ...opts });
  }
  return emulatorLaneFaults(inProcessCluster(sandbox).faults, random, relay);
}

/** The emulator's fault loop (wherever the emulator runs), plus the relay's network now and then (every 2–5 s). */
function emulatorLaneFaults(clusterFaults: ClusterFaults, random: () => number, relay: ChaosRelay): FaultLoop {
  const hooks = startFaultLoop(clusterFaults, random, { controller: CONTROLLER_IDENTITY, relay: RELAY_IDENTITY });
  let on = true;
  const net = (async () => {
    while (on) {
      await new Promise((r) => setTimeout(r, 2000 + random() * 3000));
      if (!on) break;
      const pick = random();
      if (pick < 0.5) relay.stall(Math.floor(random() * 2000));
      else if (pick < 0.85) relay.reset();
      else await relay.kill();
    }
  })();
  return {
    injected: hooks.injected,
    async stop() {
      on = false;
      await net;
      await hooks.stop();
    },
  };
}

export interface RigOptions {
  readonly seed?: number;
  readonly backend?: ChaosBackend;
  /** The controllers that run (default every one). */
  readonly controllers?: readonly Controller[];
  /** Probability per API/table call that a worker dies around it. Default 0.03. */
  readonly killRate?: number;
  /** Sandbox options (nodes, speed, timings, storage). */
  readonly sandbox?: SandboxOptions;
  /** Real lane: at most this many kube-apiserver restarts. Default 2. */
  readonly apiServerRestarts?: number;
  readonly log?: Logger;
}

/** A rig whose cluster may run in a process of its own (the soak's: {@link startRigApart}). */
export interface RigCore {
  readonly seed: number;
  readonly random: () => number;
  /** The cluster, in this process or its own: its kubeconfigs, nodes, audit log and memory. */
  readonly cluster: BenchCluster;
  readonly store: ChaosStore;
  readonly killer: Killer;
  readonly sender: DuplicatingSender;
  readonly relay: ChaosRelay;
  readonly metrics: MetricsRegistry;
  /** VMI names whose reconcile always fails (the poison). */
  readonly poisoned: Set<string>;
  /** The user's client (not under chaos). */
  readonly user: KubeClient;
  /** Starts the relay, the workers and the faults. */
  start(): Promise<void>;
  /** Faults off (the lane's loop, worker kills, AWS faults); duplicates stop too. */
  calm(): Promise<void>;
  /** Everything injected so far, by fault. */
  injected(): Record<string, number>;
  stop(): Promise<void>;
}

/** A rig with its sandbox in this process, which the scenarios reach into (its audit log, storage, nodes). */
export interface Rig extends RigCore {
  readonly sandbox: Sandbox;
}

/** The sandbox a rig starts: three nodes, quick simulated boots, the options on top. */
function rigSandboxOptions(opts: RigOptions): SandboxOptions {
  return { nodes: 3, ...opts.sandbox, timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50, ...opts.sandbox?.timings } };
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const sandbox = await startSandbox(rigSandboxOptions(opts));
  const rig = await assembleRig(inProcessCluster(sandbox), opts, (random, relay) => startLaneFaults(sandbox, random, relay, { apiServerRestarts: opts.apiServerRestarts ?? 2 }));
  return { ...rig, sandbox };
}

/**
 * A rig whose cluster — the emulator and the simulated nodes — runs in a process of its own
 * (test/bench/support/cluster-child.ts), its fault hooks and audit log reached over the channel:
 * this process then holds the product (relay, queue, table, every controller) and the harness
 * alone, so its memory is theirs. The emulator lane only: the real lane's faults restart processes
 * this one owns.
 */
export async function startRigApart(opts: RigOptions = {}): Promise<RigCore> {
  if (REAL) throw new Error('a rig with its cluster apart runs the emulator lane only (unset VR_CONTROL_PLANE=real, or keep the cluster in process)');
  const { speed, ...options } = rigSandboxOptions(opts);
  if (speed !== undefined && speed !== 1) throw new Error('a cluster in its own process runs at the wall clock\'s speed');
  const cluster = await startClusterProcess({ vmis: 0, identities: [CONTROLLER_IDENTITY, RELAY_IDENTITY, USER_IDENTITY], options: { ...options, controlPlane: 'emulator' } });
  return assembleRig(cluster, opts, (random, relay) => emulatorLaneFaults(cluster.faults, random, relay));
}

async function assembleRig(cluster: BenchCluster, opts: RigOptions, laneFaults: (random: () => number, relay: ChaosRelay) => FaultLoop): Promise<RigCore> {
  const seed = opts.seed ?? Date.now() % 1_000_000;
  const random = seededRandom(seed);
  const speed = opts.sandbox?.speed ?? 1;
  let store: ChaosStore | undefined;
  try {
    store = await openChaosStore(random, { backend: opts.backend ?? 'sqlite' });
    const { state, slow } = store;
    const killer = new Killer(random, opts.killRate ?? 0.03);
    // The API server's refusals the controllers met, by status.
    const seen: Record<string, number> = {};
    const poisoned = new Set<string>();
    const metrics = new MetricsRegistry();
    const expectations = chaosExpectations(state.expectations, killer);
    const now = () => cluster.nowMs();
    const parts = new Set(opts.controllers ?? DEFINITIONS.map((d) => d.name));
    const pools = DEFINITIONS.filter((d) => parts.has(d.name)).map((def) => {
      const kc = cluster.kubeConfig(identityOf(def.name));
      const kube = createKubeClient(kc, asProductCounting(seen));
      const spec = bindController(def, {
        kube,
        expectations,
        leases: state.leases,
        clusterConfig: cachedClusterConfig(kube),
        log: opts.log ?? quiet,
        now,
        clockSpeed: speed,
        // A dead pass's expectations are taken over after 4 s of wall time: longer than any live
        // pass, as the function timeout would be in production.
        takeoverMs: 4000 * speed,
        virtApi: virtApiFor(kc, cluster.virtApiUrl),
        metrics,
      });
      return new WorkerPool({
        controller: def.name,
        concurrency: def.name === 'vmi' ? 10 : def.name === 'workload-updater' ? 1 : 3,
        queue: slow,
        // The messages' views and the write fences, as the local runtime uses them (killed around their table writes too).
        handle: instrumented(spec, { kube: chaosKube(kube, killer, poisoned, seen), metrics, log: opts.log ?? quiet, now, fences: expectations }),
        metrics,
        log: quiet,
      });
    });
    // A poisoned VMI's key goes without its view: its reads must reach the poisoned client.
    const sender = new DuplicatingSender(withoutViewsOf(slow, poisoned), random);
    const relay = await startChaosRelay({ kubeConfig: cluster.kubeConfig(identityOf('relay')), queue: sender, metrics });
    let faults: FaultLoop | undefined;
    const calm = async () => {
      await faults?.stop();
      killer.armed = false;
      if (store?.aws) store.aws.armed = false;
    };
    const s = store;
    return {
      seed,
      random,
      cluster,
      store: s,
      killer,
      sender,
      relay,
      metrics,
      poisoned,
      user: patientUser(createKubeClient(cluster.kubeConfig(USER_IDENTITY))),
      async start() {
        relay.start();
        for (const p of pools) p.start();
        faults = laneFaults(random, relay);
      },
      calm,
      injected: () => ({
        ...faults?.injected,
        ...relay.injected,
        ...s.injected(),
        ...seen, workerKills: killer.crashes,
        duplicateDeliveries: sender.duplicates,
        relayLists: relay.relists(),
        abandonedReceipts: metrics.total('worker_crashes_total'),
      }),
      async stop() {
        await calm();
        sender.stop();
        await relay.stop();
        await Promise.all(pools.map((p) => p.stop()));
        await s.close();
        await cluster.stop();
      },
    };
  } catch (err) {
    await store?.close();
    await cluster.stop();
    throw err;
  }
}
