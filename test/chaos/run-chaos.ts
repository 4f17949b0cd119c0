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
import { asProductCounting } from '../support/as-product.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { DeadLetter, ReceivedKey, ReplayReport } from '../../shared/queue/port.ts';
import type { Outcome } from '../../shared/reconcile/outcome.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { vmiController } from '../../functions/vmi/controller.ts';
import { WorkerPool } from '../../local/workers.ts';
import { inProcessCluster } from '../bench/support/cluster.ts';
import { createVmis, sandboxFor, vmiNames, VmiTracker, waitUntil } from '../bench/support/vmi-run.ts';
import { chaosExpectations, chaosKube, DuplicatingSender, Killer, seededRandom, withoutViewsOf } from './injectors.ts';
import { invocationKube, LambdaInvoker } from './lambda-invoker.ts';
import { startChaosRelay } from './relay-chaos.ts';
import type { SqsKeyQueue } from '../../shared/queue/sqs-queue.ts';
import { identityOf, startLaneFaults } from './rig.ts';
import { openChaosStore, type ChaosBackend } from './store.ts';
import { NODES, PODS, VMIS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { testSpec } from '../support/controller-context.ts';
import { conditionsText } from '../support/conditions-text.ts';

/**
 * On the real control plane (VR_CONTROL_PLANE=real) the relay and the VMI controller run under
 * their own identities and RBAC roles, and the server's faults are the real one's (restarts, etcd
 * compaction, APF's 429: real-faults.ts) instead of the emulator's hooks. The runtime-side chaos
 * (worker kills, duplicate deliveries, a slow queue, poison, malformed messages) and the relay's
 * (network stalls and resets, kills) run on both lanes.
 */
const relayIdentity = identityOf('relay');
const controllerIdentity = identityOf('vmi');

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
  /** The queue and table: embedded SQLite (default) or SQS and DynamoDB (fauxqs, DynamoDB Local). */
  readonly backend?: ChaosBackend;
  /**
   * Who consumes the queue: the local runtime's workers (default), or Lambda-shaped invocations
   * (aws backend only: batches from the SQS trigger, killed at their deadline; lambda-invoker.ts).
   */
  readonly consumer?: 'workers' | 'lambda';
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
  const store = await openChaosStore(random, { backend: opts.backend ?? 'sqlite' });
  const { queue, state, slow, leaseMs } = store;
  const killer = new Killer(random, opts.killRate ?? 0.03);
  // The API server's refusals the controllers met, by status.
  const seen: Record<string, number> = {};
  const poisoned = new Set([POISON_VMI]);
  const metrics = new MetricsRegistry();
  const kube = createKubeClient(sandbox.apiServer.kubeConfig(controllerIdentity), asProductCounting(seen));
  // A key whose pod-create expectation was recorded by a worker that then died is taken over
  // after this long: more than a lease, as the function timeout would be in production.
  const expectations = chaosExpectations(state.expectations, killer);
  const spec = testSpec(vmiController, { kube, expectations, clusterConfig: cachedClusterConfig(kube), log: quiet, takeoverMs: 4000 });
  const delay = opts.apiDelayMs ?? 0;
  const slowKube = delay > 0 ? decorateKubeClient(kube, (_method, _args, call) => new Promise((r) => setTimeout(r, delay)).then(call)) : kube;
  const lambda = opts.consumer === 'lambda';
  if (lambda && !store.sqs) throw new Error('the lambda consumer needs the aws backend');
  // The messages' views and the write fences, as the runtimes use them (killed around their table writes too).
  const handle = instrumented(spec, { kube: lambda ? invocationKube(chaosKube(slowKube, killer, poisoned, seen)) : chaosKube(slowKube, killer, poisoned, seen), metrics, log: quiet, fences: expectations });
  const deliveries = { maxAttempt: 0, maxAttemptKey: '', longerThanLease: 0, longestMs: 0, overlapping: 0, stalls: 0 };
  // Event-loop stalls long enough to keep a worker's heartbeat (every quarter lease) from renewing
  // in time: then a live worker looks dead, as it would to any lease-based queue.
  let tick = performance.now();
  const stallWatch = setInterval(() => {
    const now = performance.now();
    if (now - tick >= leaseMs * 0.75) deliveries.stalls++;
    tick = now;
  }, 50);
  const reconciling = new Map<string, number>();
  const tracked = async (rk: ReceivedKey): Promise<Outcome> => {
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
      if (ms > leaseMs) deliveries.longerThanLease++;
    }
  };
  // The consumer: the local runtime's workers, or Lambda-shaped invocations over SQS.
  const pool = lambda
    ? new LambdaInvoker({ client: store.sqs!.client, prefix: store.sqs!.prefix, controller: 'vmi', queue: store.queue as SqsKeyQueue, reconcile: tracked, concurrency: 4, random })
    : new WorkerPool({ controller: 'vmi', concurrency: 10, queue: slow, metrics, log: quiet, handle: tracked });
  const sender = new DuplicatingSender(withoutViewsOf(slow, poisoned), random);
  const relay = await startChaosRelay({ kubeConfig: sandbox.apiServer.kubeConfig(relayIdentity), queue: sender, metrics });
  const faultLoop = startLaneFaults(sandbox, random, relay);
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
    const lostState = lost.length > 0 ? [...(await Promise.all(lost.slice(0, 5).map((n) => describeVmi(kube, n)))), await describeNodes(kube)] : [];

    // Calm: no more faults; the poison key should be in the DLQ by now (it fails at once).
    await faultLoop.stop();
    killer.armed = false;
    if (store.aws) store.aws.armed = false;
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
      injected: { ...injected, ...(pool instanceof LambdaInvoker ? pool.counts : {}), ...relay.injected, ...store.injected(), relayLists: relay.relists(), ...seen, workerKills: killer.crashes, duplicateDeliveries: sender.duplicates, abandonedReceipts: metrics.total('worker_crashes_total') },
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

/** One line on the nodes a lost VMI's pod could have gone to: readiness and taints. */
async function describeNodes(kube: KubeClient): Promise<string> {
  const nodes = await kube.list(NODES, undefined).catch((e: Error) => e);
  if (nodes instanceof Error) return `nodes: ${nodes.message}`;
  return `nodes: ${nodes.items.map((n) => `${n.metadata?.name} Ready=${n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '-'}${n.spec?.unschedulable ? ' cordoned' : ''} taints=[${(n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).join(',')}]`).join('; ')}`;
}

/** One line on a VMI that did not get where it should: its phase, conditions and launcher pods. */
async function describeVmi(kube: KubeClient, name: string): Promise<string> {
  const vmi = await kube.get(VMIS, 'default', name).catch((e: Error) => ({ error: e.message }));
  const pods = await kube.list(PODS, 'default', { labelSelector: `kubevirt.io/created-by` }).catch(() => ({ items: [] }));
  if (vmi === undefined) return `${name}: gone`;
  if ('error' in vmi) return `${name}: ${vmi.error}`;
  const mine = pods.items.filter((p) => p.metadata?.labels?.['kubevirt.io/created-by'] === vmi.metadata?.uid);
  // An unbound pod says why: the scheduler's message (no node fits, the nodes it saw tainted…).
  const unbound = (p: (typeof mine)[number]) => p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False')?.message;
  const podLine = mine.map((p) => `${p.metadata?.name} ${p.status?.phase}${p.metadata?.deletionTimestamp ? ' deleting' : ''} node=${p.spec?.nodeName ?? '-'}${unbound(p) ? ` (${unbound(p)})` : ''}`).join('; ');
  return `${name}: phase=${vmi.status?.phase ?? '-'} rv=${vmi.metadata?.resourceVersion} finalizers=${(vmi.metadata?.finalizers ?? []).join(',')} conditions=[${conditionsText(vmi.status?.conditions)}] node=${vmi.status?.nodeName ?? '-'} pods=[${podLine || 'none'}]`;
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
