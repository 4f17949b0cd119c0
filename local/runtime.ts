/**
 * The local runtime behind `virt-reconciler up` / `npm start`: the same relay and the same
 * controller code as on AWS, in one process, over the embedded SQLite queue and table, against a
 * kubeconfig cluster or the project's own sandbox cluster.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../shared/kube/client-node.ts';
import { createVirtApiClient, type VirtApiClient } from '../shared/kube/virt-api.ts';
import { guardedVirtApi } from '../shared/kube/guarded-writes.ts';
import { kubevirtControllerUser } from '../shared/kube/kubevirt-identity.ts';
import type { KubeClient } from '../shared/kube/client.ts';
import type { Logger } from '../shared/metrics/log.ts';
import { MetricsRegistry } from '../shared/metrics/registry.ts';
import type { Controller } from '../shared/queue/message.ts';
import { SqliteKeyQueue } from '../shared/queue/sqlite-queue.ts';
import { DEFAULT_RETRY, type RetryPolicy } from '../shared/queue/port.ts';
import { cachedClusterConfig } from '../shared/config/cluster-config-cache.ts';
import { instrumented } from '../shared/reconcile/instrument.ts';
import { openSqliteState, type SqliteStateStore } from '../shared/state/sqlite-state.ts';
import { Relay } from '../functions/relay/relay.ts';
import { DEFINITIONS } from '../functions/registry.ts';
import { bindController } from '../shared/reconcile/define-controller.ts';
import { controllerInfo, perController } from '../shared/controllers.ts';
import { Checkpointer } from './checkpointer.ts';
import { SweepTimers } from './sweeps.ts';
import { WorkerPool } from './workers.ts';
import { LocalCutover, type CutoverOptions } from './cutover.ts';

/** The runtime's parts that talk to the cluster, each of which may have its own identity. */
export type RuntimePart = 'relay' | Controller;

export interface LocalRuntimeOptions {
  readonly kubeConfig: KubeConfig;
  /**
   * A part's own kubeconfig (default `kubeConfig` for all): on the real control plane the
   * suites run the relay and each controller under its own identity, so RBAC holds each to
   * its own role, as on AWS (one Lambda, one role each).
   */
  readonly kubeConfigFor?: (part: RuntimePart) => KubeConfig;
  /** SQLite file for the queue and table; `:memory:` for tests. */
  readonly dbPath: string;
  readonly log: Logger;
  /** Workers per controller; default each registry entry's `workers` (KubeVirt: vmi 10, vm 3, migration 3). */
  readonly workers?: Partial<Record<Controller, number>>;
  /**
   * Keys a worker receives and reconciles together, 1–10 (default 1): what a Lambda FIFO batch
   * does (`-c batchSize` on AWS). Each batch's trace entries are written once.
   */
  readonly batchSize?: number;
  readonly retry?: RetryPolicy;
  /** Lease of a received key before it is delivered again (a crashed worker). */
  readonly visibilityTimeoutMs?: number;
  /** See VmiDeps.createTakeoverMs. */
  readonly createTakeoverMs?: number;
  readonly now?: () => number;
  /** Simulated ms per wall-clock ms of `now` (a sped-up sandbox clock); see MigrationDeps.clockSpeed and VmDeps.clockSpeed. */
  readonly clockSpeed?: number;
  /**
   * Where virt-api's subresources are served (freeze, unfreeze, stop): the sandbox's own virt-api
   * (`sandbox.storage.virtApi.url`). Default: the cluster's API server, which aggregates virt-api
   * (reached with the kubeconfig's server, CA and token).
   */
  readonly virtApiUrl?: string;
  /** Run the controllers' sweeps (local/sweeps.ts); default true. */
  readonly sweeps?: boolean;
  /**
   * How long the controllers keep the cluster config read from the KubeVirt CR (default 5000 ms,
   * shared/config/cluster-config-cache.ts). 0 re-reads it every reconcile: for a test that changes
   * the CR between cases and must not wait out the cache.
   */
  readonly clusterConfigTtlMs?: number;
  /**
   * The cutover (docs/cutover.md): hold virt-controller's Lease to write (`lead`), or write every
   * decision as a dry run and compare it with the live controller's (`shadow`). Without it every
   * write is sent and no Lease is read (the tests' single runtime).
   */
  readonly cutover?: CutoverOptions;
  /** Render launcher pods with this image, whatever the KubeVirt CR says (virt-controller's `--launcher-image`). */
  readonly launcherImage?: string;
  /** KubeVirt's install namespace (default `kubevirt`): whose `kubevirt-controller` the controllers write as where virt-api judges identity. */
  readonly kubevirtNamespace?: string;
  /**
   * Send the writes virt-api judges by identity as KubeVirt's controller (default true;
   * shared/kube/kubevirt-identity.ts). Off only for a cluster without virt-api.
   */
  readonly impersonateKubeVirt?: boolean;
}

/** The subresource client: `url` when given, else the kubeconfig's cluster (bearer token, CA). */
export function virtApiFor(kc: KubeConfig, url: string | undefined): VirtApiClient {
  if (url) return createVirtApiClient({ server: url, skipTLSVerify: url.startsWith('http:') });
  const cluster = kc.getCurrentCluster();
  const token = kc.getCurrentUser()?.token;
  return createVirtApiClient({
    server: cluster?.server ?? '',
    caData: cluster?.caData,
    skipTLSVerify: cluster?.skipTLSVerify === true || (cluster?.server ?? '').startsWith('http:'),
    ...(token ? { token: async () => token } : {}),
  });
}

export const DEFAULT_WORKERS: Record<Controller, number> = perController((c) => controllerInfo(c).workers);

export class LocalRuntime {
  readonly metrics = new MetricsRegistry();
  readonly queue: SqliteKeyQueue;
  readonly state: SqliteStateStore;
  readonly kube: KubeClient;
  readonly relay: Relay;
  readonly pools: WorkerPool[];
  /** The sweeps' schedule (EventBridge Scheduler's part on AWS). */
  readonly sweeps: SweepTimers;
  readonly #db: DatabaseSync;
  readonly #opts: LocalRuntimeOptions;
  #sweeper: NodeJS.Timeout | undefined;
  readonly #checkpointer: Checkpointer | undefined;
  /** The Lease, its fence and shadow mode's judge, when `opts.cutover` is given. */
  readonly cutover: LocalCutover | undefined;

  constructor(opts: LocalRuntimeOptions) {
    this.#opts = opts;
    if (opts.dbPath !== ':memory:') mkdirSync(dirname(opts.dbPath), { recursive: true });
    this.#db = new DatabaseSync(opts.dbPath);
    // WAL + NORMAL: no fsync per commit, and a crash loses nothing committed. Checkpoints fsync
    // and would stall the event loop: a worker thread runs them instead (checkpointer.ts).
    const onDisk = opts.dbPath !== ':memory:';
    this.#db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;${onDisk ? ' PRAGMA wal_autocheckpoint = 0;' : ''}`);
    this.#checkpointer = onDisk ? new Checkpointer(opts.dbPath) : undefined;
    this.queue = new SqliteKeyQueue({ db: this.#db, retry: opts.retry ?? DEFAULT_RETRY, ...(opts.visibilityTimeoutMs ? { visibilityTimeoutMs: opts.visibilityTimeoutMs } : {}) });
    this.state = openSqliteState({ db: this.#db });
    // The writes virt-api judges by identity go as KubeVirt's controller (shared/kube/kubevirt-identity.ts).
    const clientOptions = { reportingInstance: 'virt-reconciler-local', impersonateKubeVirtController: opts.impersonateKubeVirt === false ? undefined : kubevirtControllerUser(opts.kubevirtNamespace ?? opts.cutover?.namespace) };
    this.kube = createKubeClient(opts.kubeConfig, clientOptions);
    // On the real control plane each part has its own identity (as each Lambda has its own
    // role), so each controller gets its own client and reads the cluster configuration itself.
    const kubes = perController((c) => (opts.kubeConfigFor ? createKubeClient(opts.kubeConfigFor(c), clientOptions) : this.kube));
    const ttl = opts.clusterConfigTtlMs;
    const overrides = opts.launcherImage ? { launcherImage: opts.launcherImage } : {};
    const sharedConfig = opts.kubeConfigFor ? undefined : cachedClusterConfig(this.kube, ttl, Date.now, overrides);
    const now = opts.now ?? Date.now;
    this.cutover = opts.cutover
      ? new LocalCutover(opts.cutover, { db: this.#db, state: this.state, log: opts.log, metrics: this.metrics, relayKube: opts.kubeConfigFor ? createKubeClient(opts.kubeConfigFor('relay')) : this.kube, kubeConfigFor: (c) => opts.kubeConfigFor?.(c) ?? opts.kubeConfig, impersonateKubeVirtController: clientOptions.impersonateKubeVirtController })
      : undefined;
    const specs = DEFINITIONS.map((def) =>
      bindController(def, {
        kube: kubes[def.name],
        expectations: this.cutover?.expectations ?? this.state.expectations,
        leases: this.cutover?.leases ?? this.state.leases,
        clusterConfig: sharedConfig ?? cachedClusterConfig(kubes[def.name], ttl, Date.now, overrides),
        log: opts.log,
        now,
        clockSpeed: opts.clockSpeed,
        takeoverMs: opts.createTakeoverMs,
        virtApi: guardedVirtApi(virtApiFor(opts.kubeConfigFor?.(def.name) ?? opts.kubeConfig, opts.virtApiUrl), this.cutover ? () => this.cutover!.gate.mode() : undefined),
        metrics: this.metrics,
      }),
    );
    const workers = { ...DEFAULT_WORKERS, ...opts.workers };
    this.pools = specs.map(
      (spec) =>
        new WorkerPool({
          controller: spec.controller,
          concurrency: workers[spec.controller],
          queue: this.queue,
          handle: instrumented(spec, { kube: kubes[spec.controller], metrics: this.metrics, log: opts.log, now, retry: opts.retry ?? DEFAULT_RETRY, queue: this.queue, apiServer: opts.kubeConfig.getCurrentCluster()?.server ?? '', fences: this.state.expectations, ...(this.cutover ? { cutover: this.cutover.hooks(spec.controller) } : {}) }),
          metrics: this.metrics,
          log: opts.log,
          batchSize: opts.batchSize ?? 1,
          traces: this.state.traces,
          now,
        }),
    );
    this.sweeps = new SweepTimers({ queue: this.queue, log: opts.log, now, clockSpeed: opts.clockSpeed });
    const cutover = this.cutover;
    this.relay = new Relay({
      kubeConfig: opts.kubeConfigFor?.('relay') ?? opts.kubeConfig,
      queue: this.queue,
      log: opts.log,
      metrics: this.metrics,
      now,
      ...(cutover ? { holdsLease: () => cutover.keeper.writable, ...(cutover.recorder ? { observe: cutover.recorder.observe.bind(cutover.recorder) } : {}) } : {}),
    });
    cutover?.onWritable(() => this.relay.resync());
  }

  start(): void {
    this.relay.start();
    this.cutover?.start();
    for (const p of this.pools) p.start();
    if (this.#opts.sweeps !== false) this.sweeps.start();
    // Expired expectations and idle failure counts are swept now and then.
    this.#sweeper = setInterval(() => this.state.sweep(Date.now()), 60_000);
    this.#sweeper.unref();
  }

  /** Clean shutdown: stop watching (flushing the outbox), let workers settle their keys, close the database. */
  async stop(): Promise<void> {
    clearInterval(this.#sweeper);
    this.sweeps.stop();
    await this.relay.stop();
    await Promise.all(this.pools.map((p) => p.stop()));
    // Every key settled: the Lease, if ours, is released for a standby to take at once.
    await this.cutover?.stop();
    await this.queue.close();
    await this.state.close();
    this.#db.close();
    await this.#checkpointer?.stop();
  }
}
