/**
 * The systems under comparison, started against one sandbox: the serverless path
 * (LocalRuntime: relay → SQLite queue → VMI function workers), the client-go-style baseline
 * (informer → in-memory workqueue → the same reconcile), and KubeVirt's own virt-controller
 * (kubevirt.ts), against one cluster (cluster.ts). Ours time their API calls and collect
 * per-reconcile durations from the reconcile log lines; KubeVirt's runs in a process of its own,
 * measured from outside (its requests by the API server, its CPU and memory from /proc).
 */
import { kubevirtControllerUser } from '../../../shared/kube/kubevirt-identity.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { Fields, Logger } from '../../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { Expectations } from '../../../shared/state/port.ts';
import type { BenchCluster } from './cluster.ts';
import { LocalRuntime } from '../../../local/runtime.ts';
import { BaselineController } from '../baseline/controller.ts';
import { replicaSetController } from '../../../functions/replicaset/controller.ts';
import type { ControllerSpec } from '../../../shared/reconcile/instrument.ts';
import { CallTimer, timedKubeClient, timeInPlace } from './timed-kube.ts';
import { CONTROLLER_IDENTITY, USER_IDENTITY } from './vmi-run.ts';
import { testSpec } from '../../support/controller-context.ts';
import { KUBEVIRT_CONTROLLER_IDENTITY, kubevirtSetup, startVirtController, type VirtController } from './kubevirt.ts';
import type { SystemName } from './system-choice.ts';

export type { SystemName } from './system-choice.ts';

/** The identities a bench cluster hands kubeconfigs out for: ours, KubeVirt's, the user's. */
export const BENCH_IDENTITIES = [CONTROLLER_IDENTITY, USER_IDENTITY, KUBEVIRT_CONTROLLER_IDENTITY];

export interface RunningSystem {
  readonly name: SystemName;
  /** The identity the API server counts this system's requests under. */
  readonly identity: string;
  /**
   * KubeVirt's virt-controller, measured from outside (its process's CPU and memory, its log);
   * undefined for ours, which run in the benchmark's process and report through `metrics`.
   */
  readonly external?: VirtController;
  /** Ours: what the reconciles recorded. KubeVirt's: empty (its metrics are not scraped). */
  readonly metrics: MetricsRegistry;
  /** Time spent in Kubernetes API calls made by reconciles. */
  readonly apiTimer: CallTimer;
  /** Duration of every reconcile, ms. */
  readonly reconcileMs: number[];
  /** Reconciles that threw (transient errors, retried). */
  failed: number;
  /** Table operations (expectations) by reads and conditional writes — what DynamoDB would bill. */
  readonly table: { reads: number; writes: number };
  stop(): Promise<void>;
}

/** A logger that keeps the VMI controller's reconcile durations and drops everything else (failures counted). */
function collectingLogger(sys: { reconcileMs: number[]; failed: number }): Logger {
  const log: Logger = {
    info(message: string, fields?: Fields) {
      if (message === 'reconciled' && fields?.controller === 'vmi' && typeof fields.ms === 'number') sys.reconcileMs.push(fields.ms);
    },
    warn(message: string, fields?: Fields) {
      if (message === 'reconcile failed' && fields?.controller === 'vmi') {
        sys.failed++;
        if (typeof fields.ms === 'number') sys.reconcileMs.push(fields.ms);
      }
    },
    error() {},
    with: () => log,
  };
  return log;
}

const TABLE_READS = new Set(['get', 'satisfied', 'pendingCreations']);

/**
 * Counts every expectations call on the store object itself (reads vs writes), so that the
 * controllers already holding it are counted too: each call is one table request, as DynamoDB
 * bills it (one RRU or WRU for an item this small).
 */
export function countInPlace(store: Expectations, table: { reads: number; writes: number }): void {
  const target = store as unknown as Record<string, unknown>;
  for (const [name, fn] of Object.entries(target)) {
    if (typeof fn !== 'function') continue;
    target[name] = (...args: unknown[]) => {
      if (TABLE_READS.has(name)) table.reads++;
      else table.writes++;
      return (fn as (...a: unknown[]) => unknown).apply(store, args);
    };
  }
}

/** What a bench runs beside the VMI controller in the baseline (the serverless runtime always runs every controller). */
export interface SystemOptions {
  /** The replica set controller too (3 workers, KubeVirt's threadiness). */
  readonly replicaSets?: boolean;
}

/**
 * Starts `name` against `cluster` — ours as identity {@link CONTROLLER_IDENTITY}, KubeVirt's as
 * {@link KUBEVIRT_CONTROLLER_IDENTITY} — and resolves once it is watching (KubeVirt's: leading).
 */
export async function startSystem(name: SystemName, cluster: Pick<BenchCluster, 'kubeConfig' | 'controlPlane'>, opts: SystemOptions = {}): Promise<RunningSystem> {
  const kubeConfig = cluster.kubeConfig(CONTROLLER_IDENTITY);
  const apiTimer = new CallTimer();
  const table = { reads: 0, writes: 0 };
  const partial = { reconcileMs: [] as number[], failed: 0, table, identity: CONTROLLER_IDENTITY };
  if (name === 'kubevirt') {
    // KubeVirt's runs every controller it has (the replica set's too), as deployed.
    const setup = kubevirtSetup();
    if ('skipped' in setup) throw new Error(setup.skipped);
    const vc = await startVirtController(setup, cluster.controlPlane, cluster.kubeConfig(KUBEVIRT_CONTROLLER_IDENTITY), cluster.kubeConfig(USER_IDENTITY));
    return Object.assign(partial, { name, identity: KUBEVIRT_CONTROLLER_IDENTITY, external: vc, metrics: new MetricsRegistry(), apiTimer, stop: () => vc.stop() });
  }
  const log = collectingLogger(partial);
  if (name === 'serverless') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-rt-'));
    const rt = new LocalRuntime({ kubeConfig, dbPath: join(dir, 'queue.db'), log });
    timeInPlace(rt.kube, apiTimer);
    countInPlace(rt.state.expectations, table);
    rt.start();
    while (!rt.relay.ready) await new Promise((r) => setTimeout(r, 50));
    return Object.assign(partial, {
      name,
      metrics: rt.metrics,
      apiTimer,
      async stop() {
        await rt.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    });
  }
  // As the local runtime does: the VMI status writes act as kubevirt-controller, which virt-api's
  // VMI update admitter requires (another identity's status change is refused, and the VMI stays Pending).
  const kube = timedKubeClient(createKubeClient(kubeConfig, { reportingInstance: 'baseline', impersonateKubeVirtController: kubevirtControllerUser() }), apiTimer);
  const extra = opts.replicaSets ? [{ make: (expectations: Expectations) => testSpec(replicaSetController, { expectations, log }) as ControllerSpec<unknown>, workers: 3 }] : [];
  const ctl = new BaselineController({ kubeConfig, kube, log, extra });
  ctl.start();
  while (!ctl.synced) await new Promise((r) => setTimeout(r, 50));
  return Object.assign(partial, { name, metrics: ctl.metrics, apiTimer, stop: () => ctl.stop() });
}
