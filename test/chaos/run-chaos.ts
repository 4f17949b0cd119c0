/**
 * One chaos run (scripts/chaos.ts runs 200 VMIs; test/chaos/chaos.test.ts a smaller one in CI):
 * the relay, the SQLite queue and table and the VMI workers — the local runtime's parts,
 * assembled here so each can be wrapped — against the sandbox cluster, under:
 * worker kills at any call of a reconcile (the key is abandoned unsettled and comes back after
 * the visibility timeout), every message delivered up to 5×, watches dropped and answered with
 * 410, 429/500 from the API server, 409 on VMI writes, a slow queue, malformed messages and a key
 * that always fails permanently. Then: every VMI Scheduled, one launcher pod each, the poison in
 * the DLQ with reasons, and a replay that clears it.
 */
import { decorateKubeClient } from '../../shared/kube/call-counter.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { DeadLetter, ReplayReport } from '../../shared/queue/port.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { Relay } from '../../functions/relay/relay.ts';
import { vmiController } from '../../functions/vmi/controller.ts';
import { WorkerPool } from '../../local/workers.ts';
import { PART_IDENTITY } from '../../sandbox/real/identities.ts';
import { REAL } from '../support/lanes.ts';
import { inProcessCluster } from '../bench/support/cluster.ts';
import { CONTROLLER_IDENTITY, createVmis, sandboxFor, vmiNames, VmiTracker, waitUntil } from '../bench/support/vmi-run.ts';
import { CHAOS_VISIBILITY_MS, chaosExpectations, chaosKube, DuplicatingSender, Killer, openChaosStore, seededRandom, startFaultLoop, withoutViewsOf } from './injectors.ts';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { testSpec } from '../support/controller-context.ts';

export const RELAY_IDENTITY = 'virt-reconciler-relay';
/**
 * On the real control plane (VR_CONTROL_PLANE=real) the relay and the VMI controller run under
 * their own identities and RBAC roles, and the server-side faults (watch drops, 410, injected
 * 429/500/409) are not injected: kube-apiserver has no such hooks. The runtime-side chaos (worker
 * kills, duplicate deliveries, a slow queue, poison, malformed messages) runs on both lanes.
 */
const relayIdentity = REAL ? PART_IDENTITY.relay : RELAY_IDENTITY;
const controllerIdentity = REAL ? PART_IDENTITY.vmi : CONTROLLER_IDENTITY;

export interface ChaosOptions {
  readonly vmis: number;
  readonly seed?: number;
  /** Probability per API/table call that the worker dies around it. Default 0.03. */
  readonly killRate?: number;
  /** Give up waiting after this long, ms. */
  readonly timeoutMs?: number;
  readonly progress?: (line: string) => void;
  /**
   * Every API call of the VMI controller takes this much longer (ms): a starved machine, where a
   * reconcile outlasts the queue's lease while its worker is alive and well.
   */
  readonly apiDelayMs?: number;
}

export interface ChaosReport {
  readonly seed: number;
  readonly vmis: number;
  readonly seconds: number;
  /** VMIs that never reached Scheduled. */
  readonly lost: string[];
  /** What each lost VMI and its launcher pods looked like when the wait gave up. */
  readonly lostState: string[];
  /** VMIs with more than one launcher pod (audit log creates, and pods listed at the end). */
  readonly duplicatePods: string[];
  readonly injected: Record<string, number>;
  /** The DLQ before the replay. */
  readonly deadLetters: readonly DeadLetter[];
  readonly replay: ReplayReport;
  /** The poison key reached Scheduled after the replay. */
  readonly poisonRecovered: boolean;
  /** Keys left in the DLQ after the replay (only the malformed bodies should stay). */
  readonly deadAfterReplay: readonly DeadLetter[];
  /**
   * The highest delivery attempt seen (and of which key); reconciles that outlasted the key's
   * lease; deliveries of a key that a live worker was still reconciling (it lost its lease); and
   * event-loop stalls of ¾ of a lease or more (the heartbeat could not run in time).
   */
  readonly deliveries: { maxAttempt: number; maxAttemptKey: string; longerThanLease: number; longestMs: number; overlapping: number; stalls: number };
}

const POISON_VMI = 'poison-permanent';
const MALFORMED = ['not json at all', '{"v":2,"controller":"vmi","key":"default/x"}', JSON.stringify({ v: 1, controller: 'vmi', key: 'Not A Key!', cause: {} })];

/** A logger that drops everything: the run reports through its counters. */
const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const seed = opts.seed ?? Date.now() % 1_000_000;
  const random = seededRandom(seed);
  const say = opts.progress ?? (() => {});
  const t0 = performance.now();
  const sandbox = await sandboxFor(opts.vmis + 1, { podStartupMs: 300, vmiBootMs: 300 });
  const cluster = inProcessCluster(sandbox);
  const tracker = new VmiTracker(cluster);
  const store = openChaosStore(random);
  const { queue, state, slow } = store;
  const killer = new Killer(random, opts.killRate ?? 0.03);
  const poisoned = new Set([POISON_VMI]);
  const metrics = new MetricsRegistry();
  const kube = createKubeClient(sandbox.apiServer.kubeConfig(controllerIdentity));
  // A key whose pod-create expectation was recorded by a worker that then died is taken over
  // after this long: more than a lease, as the function timeout would be in production.
  const expectations = chaosExpectations(state.expectations, killer);
  const spec = testSpec(vmiController, { kube, expectations, clusterConfig: cachedClusterConfig(kube), log: quiet, takeoverMs: 4000 });
  const delay = opts.apiDelayMs ?? 0;
  const slowKube = delay > 0 ? decorateKubeClient(kube, (_method, _args, call) => new Promise((r) => setTimeout(r, delay)).then(call)) : kube;
  // The messages' views and the write fences, as the runtimes use them (killed around their table writes too).
  const handle = instrumented(spec, { kube: chaosKube(slowKube, killer, poisoned), metrics, log: quiet, fences: expectations });
  const deliveries = { maxAttempt: 0, maxAttemptKey: '', longerThanLease: 0, longestMs: 0, overlapping: 0, stalls: 0 };
  // Event-loop stalls long enough to keep a worker's heartbeat (every quarter lease) from renewing
  // in time: then a live worker looks dead, as it would to any lease-based queue.
  let tick = performance.now();
  const stallWatch = setInterval(() => {
    const now = performance.now();
    if (now - tick >= CHAOS_VISIBILITY_MS * 0.75) deliveries.stalls++;
    tick = now;
  }, 50);
  const reconciling = new Map<string, number>();
  const pool = new WorkerPool({
    controller: 'vmi',
    concurrency: 10,
    queue: slow,
    metrics,
    log: quiet,
    handle: async (rk) => {
      if (rk.attempt > deliveries.maxAttempt) Object.assign(deliveries, { maxAttempt: rk.attempt, maxAttemptKey: rk.message.key });
      const key = rk.message.key;
      // A second delivery of a key while a live worker still reconciles it: that worker lost its lease.
      if ((reconciling.get(key) ?? 0) > 0) deliveries.overlapping++;
      reconciling.set(key, (reconciling.get(key) ?? 0) + 1);
      const t = performance.now();
      try {
        return await handle(rk);
      } finally {
        reconciling.set(key, reconciling.get(key)! - 1);
        const ms = performance.now() - t;
        deliveries.longestMs = Math.max(deliveries.longestMs, Math.round(ms));
        if (ms > CHAOS_VISIBILITY_MS) deliveries.longerThanLease++;
      }
    },
  });
  const sender = new DuplicatingSender(withoutViewsOf(slow, poisoned), random);
  const relay = new Relay({ kubeConfig: sandbox.apiServer.kubeConfig(relayIdentity), queue: sender, log: quiet, metrics });
  // The real lane has no fault injection: the run there checks the product's identities and RBAC.
  const faultLoop = startFaultLoop(sandbox, random, { controller: CONTROLLER_IDENTITY, relay: RELAY_IDENTITY }, !REAL);
  const { injected } = faultLoop;
  injected.malformed = 0;

  try {
    relay.start();
    pool.start();
    for (const body of MALFORMED) await queue.sendRaw('vmi', body);
    injected.malformed = MALFORMED.length;
    const names = vmiNames('chaos', opts.vmis);
    await createVmis(cluster, tracker, [POISON_VMI, ...names], { concurrency: 10 });
    say(`${opts.vmis} VMIs (+1 poison) created; waiting for Scheduled under chaos`);
    const scheduled = () => names.filter((n) => tracker.vmis.get(n)?.scheduledAt !== undefined).length;
    await waitUntil(() => scheduled() >= names.length, opts.timeoutMs ?? 300_000, () => say(`${scheduled()}/${names.length} Scheduled, ${killer.crashes} worker kills, ${sender.duplicates} duplicate deliveries`));
    const lost = names.filter((n) => tracker.vmis.get(n)?.scheduledAt === undefined);
    const lostState = await Promise.all(lost.slice(0, 5).map((n) => describeVmi(kube, n)));

    // Calm: no more faults; the poison key should be in the DLQ by now (it fails at once).
    await faultLoop.stop();
    killer.armed = false;
    const dlqReady = async () => (await queue.listDeadLetters({ controller: 'vmi' })).some((d) => d.key === `default/${POISON_VMI}`);
    for (let i = 0; i < 100 && !(await dlqReady()); i++) await new Promise((r) => setTimeout(r, 100));
    const deadLetters = await queue.listDeadLetters();
    say(`DLQ: ${deadLetters.map((d) => `${d.key || '(malformed)'}: ${d.reason}`).join('; ')}`);

    // Fix the poison, then replay: the key re-reads current state and reaches Scheduled.
    poisoned.clear();
    const replay = await queue.replay({ controller: 'vmi' });
    const poisonRecovered = await waitUntil(() => tracker.vmis.get(POISON_VMI)?.scheduledAt !== undefined, 60_000);
    const deadAfterReplay = await queue.listDeadLetters();

    // Duplicates: from the audit log, and from what the API server holds now.
    const dup = new Set<string>();
    for (const [name, m] of tracker.vmis) if (m.podCreates > 1) dup.add(name);
    const pods = await kube.list(PODS, 'default', { labelSelector: 'kubevirt.io=virt-launcher' });
    const perVmi = new Map<string, number>();
    for (const p of pods.items) {
      const owner = p.metadata?.ownerReferences?.find((r) => r.controller)?.name ?? '';
      if (!p.metadata?.deletionTimestamp) perVmi.set(owner, (perVmi.get(owner) ?? 0) + 1);
    }
    for (const [name, n] of perVmi) if (n > 1) dup.add(name);
    return {
      seed,
      vmis: opts.vmis,
      seconds: Math.round((performance.now() - t0) / 100) / 10,
      lost,
      lostState,
      duplicatePods: [...dup],
      injected: { ...injected, workerKills: killer.crashes, duplicateDeliveries: sender.duplicates, abandonedReceipts: metrics.total('worker_crashes_total') },
      deadLetters,
      replay,
      poisonRecovered,
      deadAfterReplay,
      deliveries,
    };
  } finally {
    clearInterval(stallWatch);
    await faultLoop.stop();
    sender.stop();
    await relay.stop();
    await pool.stop();
    await store.close();
    tracker.stop();
    await sandbox.stop();
  }
}

/** One line on a VMI that did not get where it should: its phase, conditions and launcher pods. */
async function describeVmi(kube: KubeClient, name: string): Promise<string> {
  const vmi = await kube.get(VMIS, 'default', name).catch((e: Error) => ({ error: e.message }));
  const pods = await kube.list(PODS, 'default', { labelSelector: `kubevirt.io/created-by` }).catch(() => ({ items: [] }));
  if (vmi === undefined) return `${name}: gone`;
  if ('error' in vmi) return `${name}: ${vmi.error}`;
  const mine = pods.items.filter((p) => p.metadata?.labels?.['kubevirt.io/created-by'] === vmi.metadata?.uid);
  const conds = (vmi.status?.conditions ?? []).map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`).join(',');
  const podLine = mine.map((p) => `${p.metadata?.name} ${p.status?.phase}${p.metadata?.deletionTimestamp ? ' deleting' : ''} node=${p.spec?.nodeName ?? '-'}`).join('; ');
  return `${name}: phase=${vmi.status?.phase ?? '-'} rv=${vmi.metadata?.resourceVersion} finalizers=${(vmi.metadata?.finalizers ?? []).join(',')} conditions=[${conds}] node=${vmi.status?.nodeName ?? '-'} pods=[${podLine || 'none'}]`;
}

/** What must hold after a run; an empty list means it passed. */
export function chaosViolations(r: ChaosReport): string[] {
  const out: string[] = [];
  if (r.lost.length) out.push(`${r.lost.length} VMI(s) never reached Scheduled: ${r.lost.slice(0, 10).join(', ')}`, ...r.lostState);
  if (r.duplicatePods.length) out.push(`duplicate launcher pods for: ${r.duplicatePods.join(', ')}`);
  const malformed = r.deadLetters.filter((d) => d.reason === 'MalformedMessage');
  if (malformed.length !== MALFORMED.length) out.push(`expected ${MALFORMED.length} malformed messages in the DLQ, found ${malformed.length}`);
  if (r.deadLetters.some((d) => !d.reason || !d.message)) out.push('a dead letter without a reason or message');
  const poison = r.deadLetters.find((d) => d.key === `default/${POISON_VMI}`);
  if (!poison) out.push('the poison key is not in the DLQ');
  else if (poison.reason !== 'PoisonKey') out.push(`the poison key was dead-lettered with reason ${poison.reason}, not PoisonKey`);
  const unexpected = r.deadLetters.filter((d) => d.reason !== 'MalformedMessage' && d.key !== `default/${POISON_VMI}`);
  if (unexpected.length) out.push(`keys dead-lettered by chaos alone: ${unexpected.map((d) => `${d.key} (${d.reason}: ${d.message})`).join('; ')}`);
  if (!r.replay.moved.some((m) => m.key === `default/${POISON_VMI}`)) out.push('the replay did not move the poison key');
  if (r.replay.skipped.length !== malformed.length) out.push(`the replay skipped ${r.replay.skipped.length} dead letters, expected the ${malformed.length} malformed ones`);
  if (!r.poisonRecovered) out.push('the replayed poison key never reached Scheduled');
  const left = r.deadAfterReplay.filter((d) => d.reason !== 'MalformedMessage');
  if (left.length) out.push(`keys left in the DLQ after the replay: ${left.map((d) => `${d.key} (${d.reason} after ${d.attempts} attempts: ${d.message})`).join('; ')}`);
  return out;
}
