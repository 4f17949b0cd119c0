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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { DeadLetter, ReplayReport } from '../../shared/queue/port.ts';
import { SqliteKeyQueue } from '../../shared/queue/sqlite-queue.ts';
import { cachedClusterConfig } from '../../shared/reconcile/cluster-config-cache.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { openSqliteState } from '../../shared/state/sqlite-state.ts';
import { Relay } from '../../functions/relay/relay.ts';
import { vmiController } from '../../functions/vmi/controller.ts';
import { WorkerPool } from '../../infra/local/workers.ts';
import { PART_IDENTITY } from '../../infra/sandbox/real/identities.ts';
import { REAL } from '../support/lanes.ts';
import { CONTROLLER_IDENTITY, createVmis, sandboxFor, vmiNames, VmiTracker, waitUntil } from '../bench/support/vmi-run.ts';
import { chaosExpectations, chaosKube, DuplicatingSender, Killer, seededRandom, slowQueue } from './injectors.ts';
import { PODS } from '../../shared/api/resources.ts';

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
}

export interface ChaosReport {
  readonly seed: number;
  readonly vmis: number;
  readonly seconds: number;
  /** VMIs that never reached Scheduled. */
  readonly lost: string[];
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
  const tracker = new VmiTracker(sandbox);
  const dir = mkdtempSync(join(tmpdir(), 'chaos-'));
  const db = new DatabaseSync(join(dir, 'chaos.db'));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  // Short leases so that abandoned keys come back quickly; retries capped at 1 s.
  const queue = new SqliteKeyQueue({ db, visibilityTimeoutMs: 1500, retry: { baseDelayMs: 5, maxDelayMs: 1000, maxAttempts: 16 } });
  const state = openSqliteState({ db });
  const slow = slowQueue(queue, random, 20);
  const killer = new Killer(random, opts.killRate ?? 0.03);
  const poisoned = new Set([POISON_VMI]);
  const metrics = new MetricsRegistry();
  const kube = createKubeClient(sandbox.apiServer.kubeConfig(controllerIdentity));
  // A key whose pod-create expectation was recorded by a worker that then died is taken over
  // after this long: more than a lease, as the function timeout would be in production.
  const spec = vmiController({ expectations: chaosExpectations(state.expectations, killer), clusterConfig: cachedClusterConfig(kube), log: quiet, createTakeoverMs: 4000 });
  const pool = new WorkerPool({ controller: 'vmi', concurrency: 10, queue: slow, handle: instrumented(spec, { kube: chaosKube(kube, killer, poisoned), metrics, log: quiet }), metrics, log: quiet });
  const sender = new DuplicatingSender(slow, random);
  const relay = new Relay({ kubeConfig: sandbox.apiServer.kubeConfig(relayIdentity), queue: sender, log: quiet, metrics });
  const injected: Record<string, number> = { watchDrops: 0, watch410: 0, http429: 0, http500: 0, http409: 0, relayListErrors: 0, malformed: 0 };
  let chaosOn = !REAL;
  const faults = REAL ? undefined : sandbox.apiServer.faults;
  const faultLoop = (async () => {
    while (chaosOn && faults) {
      await new Promise((r) => setTimeout(r, 300 + random() * 700));
      if (!chaosOn) break;
      const pick = random();
      // Faults are injected against work, not against the clock: while earlier HTTP faults are
      // still waiting for requests to hit, add none. On a slow machine a time-based injector would
      // otherwise pile up faults until every request of a retrying key fails and its retries run out.
      if (pick >= 0.3 && faults.remaining() > 0) continue;
      if (pick < 0.15) {
        faults.dropWatches();
        injected.watchDrops!++;
      } else if (pick < 0.3) {
        // History gone: the relay's re-watch from its last resourceVersion gets 410 and relists.
        sandbox.apiServer.control.compactHistory();
        faults.dropWatches();
        injected.watch410!++;
      } else if (pick < 0.5) {
        faults.failNext(429, 3, { identity: CONTROLLER_IDENTITY });
        injected.http429! += 3;
      } else if (pick < 0.7) {
        faults.failNext(500, 3, { identity: CONTROLLER_IDENTITY });
        injected.http500! += 3;
      } else if (pick < 0.9) {
        faults.failNext(409, 2, { identity: CONTROLLER_IDENTITY, verb: random() < 0.5 ? 'update' : 'create' });
        injected.http409! += 2;
      } else {
        faults.failNext(500, 1, { identity: RELAY_IDENTITY, verb: 'list' });
        injected.relayListErrors!++;
      }
    }
  })();

  try {
    relay.start();
    pool.start();
    for (const body of MALFORMED) await queue.sendRaw('vmi', body);
    injected.malformed = MALFORMED.length;
    const names = vmiNames('chaos', opts.vmis);
    await createVmis(sandbox, tracker, [POISON_VMI, ...names], { concurrency: 10 });
    say(`${opts.vmis} VMIs (+1 poison) created; waiting for Scheduled under chaos`);
    const scheduled = () => names.filter((n) => tracker.vmis.get(n)?.scheduledAt !== undefined).length;
    await waitUntil(() => scheduled() >= names.length, opts.timeoutMs ?? 300_000, () => say(`${scheduled()}/${names.length} Scheduled, ${killer.crashes} worker kills, ${sender.duplicates} duplicate deliveries`));
    const lost = names.filter((n) => tracker.vmis.get(n)?.scheduledAt === undefined);

    // Calm: no more faults; the poison key should be in the DLQ by now (it fails at once).
    chaosOn = false;
    await faultLoop;
    faults?.clear();
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
      duplicatePods: [...dup],
      injected: { ...injected, workerKills: killer.crashes, duplicateDeliveries: sender.duplicates, abandonedReceipts: metrics.total('worker_crashes_total') },
      deadLetters,
      replay,
      poisonRecovered,
      deadAfterReplay,
    };
  } finally {
    chaosOn = false;
    await faultLoop;
    sender.stop();
    await relay.stop();
    await pool.stop();
    await queue.close();
    await state.close();
    db.close();
    tracker.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What must hold after a run; an empty list means it passed. */
export function chaosViolations(r: ChaosReport): string[] {
  const out: string[] = [];
  if (r.lost.length) out.push(`${r.lost.length} VMI(s) never reached Scheduled: ${r.lost.slice(0, 10).join(', ')}`);
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
  if (r.deadAfterReplay.some((d) => d.reason !== 'MalformedMessage')) out.push('keys left in the DLQ after the replay');
  return out;
}
