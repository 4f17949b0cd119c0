/**
 * The local runtime's part of the cutover (docs/cutover.md): virt-controller's Lease (taken by
 * `up` when free, renewed by the keeper while it names us, released on a clean stop), the fence
 * every reconcile passes, and in shadow mode the dry-run clients, the separate shadow state and
 * the judge whose divergences go to the runtime's database.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../shared/kube/client-node.ts';
import type { KubeClient } from '../shared/kube/client.ts';
import type { Logger } from '../shared/metrics/log.ts';
import type { MetricsRegistry } from '../shared/metrics/registry.ts';
import type { Controller } from '../shared/queue/message.ts';
import type { CutoverHooks } from '../shared/reconcile/instrument.ts';
import { openSqliteState, type SqliteStateStore } from '../shared/state/sqlite-state.ts';
import type { Expectations, Leases } from '../shared/state/port.ts';
import { CutoverGate } from '../shared/cutover/gate.ts';
import { LeaseKeeper } from '../shared/cutover/keeper.ts';
import { LeaseClient, type AcquireResult, type LeaderTimings } from '../shared/cutover/lease.ts';
import { readTarget, ShadowRecorder } from '../shared/cutover/shadow-recorder.ts';
import { SqliteDivergences } from '../shared/cutover/divergence-store.ts';
import { switchedExpectations, switchedLeases } from '../shared/cutover/shadow-state.ts';
import { errorText } from '../shared/errors.ts';

/** How the runtime stands to a virt-controller already in the cluster. */
export interface CutoverOptions {
  /** `lead`: write while we hold the Lease; `shadow`: dry-run every write while we do not. */
  readonly mode: 'lead' | 'shadow';
  /** Our holder identity in the Lease. */
  readonly identity: string;
  /** KubeVirt's namespace (default `kubevirt`). */
  readonly namespace?: string;
  /** Our leader election timings (default KubeVirt's 15 s / 10 s / 2 s). */
  readonly timings?: LeaderTimings;
  /** How far apart our decision and the live controller's may be (default 10 s). */
  readonly shadowWindowMs?: number;
  /** How long a live controller running late may take to show our decision (default 6 × the window). */
  readonly shadowLateMs?: number;
  /** How long one read of the Lease is used by the fence (default 1 s). */
  readonly leaseCacheMs?: number;
  /**
   * Act as a standby virt-controller does: take the Lease whenever it is free or expired (not
   * only at start). The tests' stand-in for KubeVirt's virt-controller runs so; `up` does not, so
   * that a `handback` is not undone by our own runtime.
   */
  readonly candidate?: boolean;
}

interface Parts {
  readonly db: DatabaseSync;
  readonly state: SqliteStateStore;
  readonly log: Logger;
  readonly metrics: MetricsRegistry;
  /** The relay's client: it holds the Lease. */
  readonly relayKube: KubeClient;
  readonly kubeConfigFor: (c: Controller) => KubeConfig;
  /** Whom the writes virt-api judges by identity act as (shared/kube/kubevirt-identity.ts): dry runs too, or admission would judge another writer. */
  readonly impersonateKubeVirtController?: string | undefined;
}

export class LocalCutover {
  readonly options: CutoverOptions;
  readonly lease: LeaseClient;
  readonly gate: CutoverGate;
  readonly keeper: LeaseKeeper;
  /** Shadow mode's judge and its table (undefined in `lead` mode). */
  readonly recorder: ShadowRecorder | undefined;
  readonly divergences: SqliteDivergences;
  readonly expectations: Expectations | undefined;
  readonly leases: Leases | undefined;
  readonly #parts: Parts;
  readonly #shadowState: SqliteStateStore | undefined;
  readonly #dryRun = new Map<Controller, KubeClient>();
  readonly #onWritable: (() => void)[] = [];

  constructor(options: CutoverOptions, parts: Parts) {
    this.options = options;
    this.#parts = parts;
    this.lease = new LeaseClient(parts.relayKube, { identity: options.identity, ...(options.namespace ? { namespace: options.namespace } : {}), ...(options.timings ? { timings: options.timings } : {}) });
    this.gate = new CutoverGate({
      identity: options.identity,
      shadow: options.mode === 'shadow',
      readLease: async () => (await this.lease.read()).lease,
      ...(options.timings ? { timings: options.timings } : {}),
      ...(options.leaseCacheMs !== undefined ? { cacheMs: options.leaseCacheMs } : {}),
    });
    this.keeper = new LeaseKeeper({
      lease: this.lease,
      candidate: options.candidate === true,
      log: parts.log,
      onWritable: () => {
        this.gate.invalidate();
        for (const fn of this.#onWritable) fn();
      },
      onHolding: () => this.gate.invalidate(),
    });
    this.divergences = new SqliteDivergences(parts.db);
    if (options.mode === 'shadow') {
      this.#shadowState = openSqliteState();
      this.expectations = switchedExpectations(parts.state.expectations, this.#shadowState.expectations);
      this.leases = switchedLeases(parts.state.leases, this.#shadowState.leases);
      this.recorder = new ShadowRecorder({ sink: this.divergences, read: (t) => readTarget(this.#parts.relayKube, t), metrics: parts.metrics, ...(options.shadowWindowMs !== undefined ? { windowMs: options.shadowWindowMs } : {}), ...(options.shadowLateMs !== undefined ? { lateMs: options.shadowLateMs } : {}) });
    } else {
      this.recorder = undefined;
      this.expectations = undefined;
      this.leases = undefined;
    }
  }

  /** The instrumented reconcile's hooks for one controller. */
  hooks(controller: Controller): CutoverHooks {
    let dry = this.#dryRun.get(controller);
    if (!dry) this.#dryRun.set(controller, (dry = createKubeClient(this.#parts.kubeConfigFor(controller), { dryRun: true, reportingInstance: 'virt-reconciler-local', impersonateKubeVirtController: this.#parts.impersonateKubeVirtController })));
    return {
      mode: () => this.gate.mode(),
      dryRun: dry,
      record: (c, key, w) => this.recorder?.record(c, key, w),
      settled: (c, key, startedAt) => this.recorder?.settled(c, key, startedAt),
    };
  }

  /** `fn` runs each time we become the writer. */
  onWritable(fn: () => void): void {
    this.#onWritable.push(fn);
  }

  /** Takes the Lease if it is free, expired or ours (`up` in lead mode); never from a live holder. */
  async acquire(): Promise<AcquireResult> {
    const r = await this.lease.acquire();
    this.gate.invalidate();
    return r;
  }

  start(): void {
    this.keeper.start();
    this.recorder?.start();
  }

  /** Stops renewing; releases the Lease if it is ours (every key has settled by now). */
  async stop(): Promise<void> {
    await this.keeper.stop();
    await this.recorder?.stop();
    try {
      await this.lease.release();
    } catch (err) {
      this.#parts.log.warn('virt-controller lease: could not release it on stop (it expires by itself)', { error: errorText(err) });
    }
    await this.#shadowState?.close();
  }
}
