/**
 * A replica set under the chaos suite's faults (injectors.ts): worker kills at any API or table
 * call of the replica set and VMI reconciles, every message delivered up to 5×, watches dropped
 * and answered with 410, 429/500 from the API server, 409 on creates and updates, a slow queue.
 * The replica set is scaled through `/scale` (as `kubectl scale` does) along `steps`, with VMIs
 * deleted by hand on the way. Checked from the API server's audit log, at every instant: never
 * more non-terminating VMIs of the replica set than `spec.replicas` — except the excess a
 * scale-down leaves, which may only shrink (no VMI may join while it lasts); and after each step,
 * exactly `spec.replicas` of them, with `status.replicas` agreeing.
 */
import type { AuditEntry } from '../../sandbox/apiserver/index.ts';
import { WorkerPool } from '../../local/workers.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { VMI_REPLICA_SETS, VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { asProductCounting } from '../support/as-product.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { replicaSetController } from '../../functions/replicaset/controller.ts';
import { vmiController } from '../../functions/vmi/controller.ts';
import { sandboxFor, USER_IDENTITY, vmiManifest } from '../bench/support/vmi-run.ts';
import { chaosExpectations, chaosKube, DuplicatingSender, Killer, patientUser, seededRandom } from './injectors.ts';
import { startChaosRelay } from './relay-chaos.ts';
import { identityOf, startLaneFaults } from './rig.ts';
import { openChaosStore, type ChaosBackend } from './store.ts';
import { testSpec } from '../support/controller-context.ts';

export interface ReplicaSetChaosOptions {
  /** `spec.replicas` in turn (the first one at creation). */
  readonly steps: readonly number[];
  /** VMIs deleted by hand after each step is reached. */
  readonly handDeletes?: number;
  readonly seed?: number;
  /** Probability per API/table call that a worker dies around it. Default 0.03. */
  readonly killRate?: number;
  /** Per step, ms. */
  readonly stepTimeoutMs?: number;
  readonly progress?: (line: string) => void;
  /** The queue and table: embedded SQLite (default) or SQS and DynamoDB. */
  readonly backend?: ChaosBackend;
}

export interface ReplicaSetChaosReport {
  readonly seed: number;
  readonly seconds: number;
  readonly steps: readonly number[];
  /** Steps whose count was never reached exactly (with status.replicas), as `replicas: live/status`. */
  readonly unreached: string[];
  /** Audit instants where the invariant broke, described. */
  readonly overshoots: string[];
  /** The most live VMIs seen above spec.replicas outside a scale-down's drain (0 when the invariant held). */
  readonly maxExcess: number;
  readonly auditEntries: number;
  readonly injected: Record<string, number>;
}

const RS = 'chaos-rs';
const NS = 'default';
const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };

export async function runReplicaSetChaos(opts: ReplicaSetChaosOptions): Promise<ReplicaSetChaosReport> {
  const seed = opts.seed ?? Date.now() % 1_000_000;
  const random = seededRandom(seed);
  const say = opts.progress ?? (() => {});
  const t0 = performance.now();
  const sandbox = await sandboxFor(Math.max(...opts.steps) * 2, { podStartupMs: 300, vmiBootMs: 300 });
  const store = await openChaosStore(random, { backend: opts.backend ?? 'sqlite' });
  const { state, slow } = store;
  const killer = new Killer(random, opts.killRate ?? 0.03);
  // The API server's refusals the controllers met, by status.
  const seen: Record<string, number> = {};
  const metrics = new MetricsRegistry();
  // Each controller under its own identity (its own RBAC role and APF flow on the real lane).
  const kube = createKubeClient(sandbox.apiServer.kubeConfig(identityOf('replicaset')), asProductCounting(seen));
  const vmiKube = createKubeClient(sandbox.apiServer.kubeConfig(identityOf('vmi')), asProductCounting(seen));
  const expectations = chaosExpectations(state.expectations, killer);
  // Expectations a read cannot settle are taken over after this long: more than a lease.
  const rsSpec = testSpec(replicaSetController, { kube, expectations, log: quiet, takeoverMs: 4000 });
  const vmiSpec = testSpec(vmiController, { kube: vmiKube, expectations, clusterConfig: cachedClusterConfig(vmiKube), log: quiet, takeoverMs: 4000 });
  const pools = [
    new WorkerPool({ controller: 'replicaset', concurrency: 3, queue: slow, handle: instrumented(rsSpec, { kube: chaosKube(kube, killer, new Set(), seen), metrics, log: quiet, fences: expectations }), metrics, log: quiet }),
    new WorkerPool({ controller: 'vmi', concurrency: 10, queue: slow, handle: instrumented(vmiSpec, { kube: chaosKube(vmiKube, killer, new Set(), seen), metrics, log: quiet, fences: expectations }), metrics, log: quiet }),
  ];
  const sender = new DuplicatingSender(slow, random);
  const relay = await startChaosRelay({ kubeConfig: sandbox.apiServer.kubeConfig(identityOf('relay')), queue: sender, metrics });
  const user = patientUser(createKubeClient(sandbox.apiServer.kubeConfig(USER_IDENTITY)));
  const faultLoop = startLaneFaults(sandbox, random, relay);
  const unreached: string[] = [];
  let ok = false;

  try {
    relay.start();
    for (const p of pools) p.start();
    const template = vmiManifest('template') as { spec: VirtualMachineInstance['spec'] };
    const labels = { app: RS };
    await user.create(VMI_REPLICA_SETS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceReplicaSet',
      metadata: { name: RS, namespace: NS },
      spec: { replicas: opts.steps[0] ?? 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: template.spec } },
    } as VirtualMachineInstanceReplicaSet);
    for (const [i, replicas] of opts.steps.entries()) {
      if (i > 0) await user.updateScale(VMI_REPLICA_SETS, NS, RS, replicas);
      const reached = await reachExactly(user, replicas, opts.stepTimeoutMs ?? 120_000, () => say(`step ${replicas}: ${killer.crashes} worker kills, ${sender.duplicates} duplicate deliveries so far`));
      say(`step ${replicas}: ${reached}`);
      if (!reached.startsWith('reached')) unreached.push(`${replicas}: ${reached}`);
      // By hand: a few VMIs deleted, which the replica set must replace — before the next step.
      // (A replacement reconcile that read the old spec just before a scale-down creates its VMIs
      // anyway, as KubeVirt's would: a race of the user's, not a controller fault, which the audit
      // check would count as an overshoot.)
      const live = await liveVmis(user);
      for (const v of live.slice(0, opts.handDeletes ?? 0)) await user.delete(VMIS, NS, v.metadata?.name ?? '');
      const replaced = await reachExactly(user, replicas, opts.stepTimeoutMs ?? 120_000, () => {});
      if (!replaced.startsWith('reached')) unreached.push(`${replicas} after the hand deletes: ${replaced}`);
    }
    ok = true;
  } finally {
    await faultLoop.stop();
    sender.stop();
    await relay.stop();
    await Promise.all(pools.map((p) => p.stop()));
    await store.close();
    // A run that threw leaves no server behind (the real control plane outlives this process).
    if (!ok) await sandbox.stop();
  }
  const audit = checkAudit(sandbox.apiServer.audit);
  await sandbox.stop();
  return {
    seed,
    seconds: Math.round((performance.now() - t0) / 100) / 10,
    steps: opts.steps,
    unreached,
    ...audit,
    injected: { ...faultLoop.injected, ...relay.injected, ...store.injected(), relayLists: relay.relists(), ...seen, workerKills: killer.crashes, duplicateDeliveries: sender.duplicates, abandonedReceipts: metrics.total('worker_crashes_total') },
  };
}

async function liveVmis(kube: KubeClient): Promise<VirtualMachineInstance[]> {
  const rs = await kube.get(VMI_REPLICA_SETS, NS, RS);
  const uid = rs?.metadata?.uid;
  return (await kube.list(VMIS, NS)).items.filter((v) => !v.metadata?.deletionTimestamp && v.metadata?.ownerReferences?.some((r) => r.controller && r.uid === uid));
}

/** Waits until exactly `replicas` live VMIs and status.replicas agree, twice 500 ms apart. */
async function reachExactly(kube: KubeClient, replicas: number, timeoutMs: number, progress: () => void): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  let lastReport = performance.now();
  let seen = '';
  let stableSince: number | undefined;
  while (performance.now() < deadline) {
    const live = (await liveVmis(kube)).length;
    const status = (await kube.get(VMI_REPLICA_SETS, NS, RS))?.status?.replicas;
    seen = `${live} live, status.replicas ${String(status)}`;
    if (live === replicas && status === replicas) {
      stableSince ??= performance.now();
      if (performance.now() - stableSince >= 500) return `reached (${seen})`;
    } else stableSince = undefined;
    if (performance.now() - lastReport > 5000) {
      progress();
      lastReport = performance.now();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return `not reached: ${seen}`;
}

/**
 * Replays the audit log: the replica set's active VMIs against its spec.replicas at every write.
 * Active as KubeVirt's replica set counts them (`filterActiveVMIs`): not terminating, not in a final
 * phase (Succeeded, Failed), not marked `Ready=False/PodTerminating` — it replaces a finished VMI
 * before it deletes it, so a Failed VMI beside its replacement is not an overshoot.
 */
export function checkAudit(audit: { query(q: object): AuditEntry[] }, rsName = RS): { overshoots: string[]; maxExcess: number; auditEntries: number } {
  const entries: AuditEntry[] = audit.query({});
  const check = new ReplicaSetWithinSpec(rsName);
  return { overshoots: check.feed(entries), maxExcess: check.maxExcess, auditEntries: entries.length };
}

/** KubeVirt's replica set's "active": not terminating, not final, not Ready=False/PodTerminating. */
export function isActiveVmi(v: VirtualMachineInstance | undefined): boolean {
  if (!v || v.metadata?.deletionTimestamp) return false;
  if (v.status?.phase === 'Succeeded' || v.status?.phase === 'Failed') return false;
  return !(v.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'False' && c.reason === 'PodTerminating');
}

/**
 * {@link checkAudit} fed in batches (later batches later), keeping what it has replayed: how the
 * soak checks every write while it drops the log it has read.
 */
export class ReplicaSetWithinSpec {
  #uid: string | undefined;
  #replicas = 0;
  #draining = false;
  /** Active VMIs of the replica set, as last written. */
  readonly #live = new Map<string, VirtualMachineInstance>();
  /** The most active VMIs above spec.replicas outside a scale-down's drain, so far. */
  maxExcess = 0;
  /**
   * What led to each overshoot: the last {@link TRAIL} writes of the replica set and its VMIs
   * before it, one line each (sandbox time, verb, who, the replica set's spec.replicas or the VMI's
   * phase and Ready) — the log itself is dropped as it is replayed, so this is what is left to read.
   */
  readonly trails: string[][] = [];
  readonly #trail: string[] = [];
  readonly rsName: string;
  constructor(rsName = RS) {
    this.rsName = rsName;
  }

  #remember(e: AuditEntry, what: string): void {
    this.#trail.push(`${new Date(e.time).toISOString().slice(11, 23)} rv ${e.resourceVersion} ${e.verb}${e.subresource ? `/${e.subresource}` : ''} ${e.resource === 'virtualmachineinstances' ? `vmi ${e.name}` : `rs ${e.name}`} by ${e.identity}: ${what}`);
    if (this.#trail.length > TRAIL) this.#trail.shift();
  }

  /** Replays `entries`; the overshoots they add. */
  feed(entries: readonly AuditEntry[]): string[] {
    const overshoots: string[] = [];
    const live = this.#live;
    for (const e of entries) {
      if (e.resource === 'virtualmachineinstancereplicasets' && e.name === this.rsName) {
        const rs = e.object as unknown as VirtualMachineInstanceReplicaSet;
        this.#uid = rs.metadata?.uid;
        const next = rs.spec?.replicas ?? 1;
        if (next < live.size) this.#draining = true;
        this.#replicas = next;
        this.#remember(e, `spec.replicas ${next}, status.replicas ${String(rs.status?.replicas)}, ${live.size} active`);
      } else if (e.resource === 'virtualmachineinstances' && this.#uid) {
        const v = e.object as unknown as VirtualMachineInstance;
        const ours = v.metadata?.ownerReferences?.some((r) => r.controller && r.uid === this.#uid) === true;
        const isLive = ours && e.type !== 'DELETED' && isActiveVmi(v);
        const joined = isLive && !live.has(e.name);
        if (isLive) live.set(e.name, v);
        else live.delete(e.name);
        if (ours) this.#remember(e, `${e.type === 'DELETED' ? 'gone' : vmiState(v)}${isLive ? '' : ' (not active)'}; ${live.size} active`);
        if (joined && (this.#draining || live.size > this.#replicas)) {
          const states = [...live.values()].map((x) => `${x.metadata?.name} ${x.status?.phase ?? '-'}`).join(', ');
          this.trails.push([...this.#trail]);
          overshoots.push(`${e.verb} ${e.name} by ${e.identity} at rv ${e.resourceVersion}: ${live.size} active (${states}), spec.replicas ${this.#replicas}${this.#draining ? ' (while draining a scale-down)' : ''}`);
        }
      }
      if (this.#draining && live.size <= this.#replicas) this.#draining = false;
      if (!this.#draining) this.maxExcess = Math.max(this.maxExcess, live.size - this.#replicas);
    }
    return overshoots;
  }
}

/** Writes kept before an overshoot ({@link ReplicaSetWithinSpec.trails}). */
const TRAIL = 40;

/** A VMI's phase, node, Ready condition and deletion, as a trail line shows it. */
function vmiState(v: VirtualMachineInstance): string {
  const ready = v.status?.conditions?.find((c) => c.type === 'Ready');
  return [v.status?.phase ?? '-', v.status?.nodeName ? `on ${v.status.nodeName}` : '', ready ? `Ready=${ready.status}${ready.reason ? `/${ready.reason}` : ''}` : '', v.metadata?.deletionTimestamp ? 'deleting' : '', v.status?.migrationState && !v.status.migrationState.completed ? 'migrating' : ''].filter(Boolean).join(' ');
}

/** What must hold after a run; an empty list means it passed. */
export function replicaSetChaosViolations(r: ReplicaSetChaosReport): string[] {
  const out: string[] = [];
  if (r.unreached.length) out.push(`steps not reached exactly: ${r.unreached.join('; ')}`);
  if (r.overshoots.length) out.push(`more live VMIs than spec.replicas: ${r.overshoots.slice(0, 5).join('; ')}`);
  if (r.maxExcess > 0) out.push(`up to ${r.maxExcess} live VMIs above spec.replicas outside a scale-down`);
  return out;
}
