/**
 * A node drain and a KubeVirt upgrade under the chaos suite's faults (injectors.ts): worker kills
 * at any API or table call of the VMI, migration, evacuation and workload-update reconciles,
 * every message delivered up to 5×, watches dropped and answered with 410, 429/500 from the API
 * server, 409 on creates and updates, a slow queue, and a VMI that fails permanently.
 *
 * 1. `vmis` LiveMigrate VMIs start on node01 (the other nodes cordoned meanwhile), plus a poisoned
 *    VMI whose reconcile always fails.
 * 2. The drain, as `kubectl drain` does it: node01 cordoned, then every pod on it that is not a
 *    DaemonSet's evicted, again every 500 ms while virt-api's webhook answers 429, until none is
 *    left. The evacuation controller migrates the VMIs off.
 * 3. The upgrade: `spec.imageTag` changed (virt-operator's rollout), node01 schedulable again; the
 *    workload updater migrates every VMI to the new launcher, the count on the CR going to 0.
 * 4. Calm: faults off; the poisoned key is in the DLQ; the poison is lifted, the DLQ replayed, and
 *    that VMI reaches Running too.
 *
 * Checked from the API server's audit log, replayed in commit order: never two unfinished
 * migrations for one VMI, at most `limits.cluster` migrations running in the cluster and
 * `limits.perNode` leaving one node (the migration controller's limits, set on the CR; KubeVirt's
 * defaults 5 and 2 unless the run lowers them); and that nothing is lost: every VMI Running,
 * none left on node01 after the drain, every one on the new launcher, the outdated count 0.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerPool } from '../../local/workers.ts';
import type { AuditEntry } from '../../sandbox/apiserver/audit.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { DEFINITIONS } from '../../functions/registry.ts';
import { bindController } from '../../shared/reconcile/define-controller.ts';
import { NO_VIRT_API } from '../../shared/kube/virt-api.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { KUBEVIRTS, MIGRATIONS, NODES, PODS, VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { asProductCounting } from '../support/as-product.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import type { Controller } from '../../shared/queue/message.ts';
import type { DeadLetter, ReplayReport } from '../../shared/queue/port.ts';
import { cachedClusterConfig } from '../../shared/config/cluster-config-cache.ts';
import { instrumented } from '../../shared/reconcile/instrument.ts';
import { USER_IDENTITY } from '../bench/support/vmi-run.ts';
import { vmiManifest } from '../e2e/support.ts';
import { peaksFromAudit, vmisWithTwoUnfinished, type Peaks } from '../support/migration-peaks.ts';
import { chaosExpectations, chaosKube, DuplicatingSender, Killer, patientUser, seededRandom, withoutViewsOf } from './injectors.ts';
import { startChaosRelay } from './relay-chaos.ts';
import { identityOf, startLaneFaults } from './rig.ts';
import { openChaosStore, type ChaosBackend } from './store.ts';

export interface DrainChaosOptions {
  /** LiveMigrate VMIs on the drained node. Default 8. */
  readonly vmis?: number;
  /**
   * The migration limits set on the KubeVirt CR (`spec.configuration.migrations`), and checked.
   * Default KubeVirt's: 5 per cluster, 2 outbound per node. A small run lowers the cluster one so
   * that both limits are reached with few VMIs.
   */
  readonly limits?: { readonly cluster: number; readonly perNode: number };
  readonly seed?: number;
  /** Probability per API/table call that a worker dies around it. Default 0.03. */
  readonly killRate?: number;
  /** Sandbox clock speed. Default 5: at 10 a loaded machine stretches a migration past its lease (5 sandbox minutes = 30 s of wall time), which is the migration controller's known limit slip, not what this run is about. */
  readonly speed?: number;
  /** Per phase (start, drain, update, replay), ms. */
  readonly phaseTimeoutMs?: number;
  readonly progress?: (line: string) => void;
  /** Where the workers' reconcile log lines go (JSON, one a line), for a run to be read afterwards. Default none. */
  readonly log?: Logger;
  /** Receives the API server's audit log at the end (to study a run afterwards). */
  readonly onAudit?: (entries: readonly AuditEntry[]) => void;
  /** The queue and table: embedded SQLite (default) or SQS and DynamoDB. */
  readonly backend?: ChaosBackend;
}

export interface DrainChaosReport {
  readonly seed: number;
  readonly seconds: number;
  /** Wall seconds of the drain and of the update. */
  readonly drainSeconds: number;
  readonly updateSeconds: number;
  /** Why a phase did not finish, if one did not. */
  readonly unfinished: string[];
  /** VMIs not Running at the end. */
  readonly notRunning: string[];
  /** For each VMI not Running at the end, how it got there: its and its pods' writes from the audit log ({@link lifeOf}). */
  readonly notRunningWhy: string[];
  /** VMIs still on the drained node when the drain ended. */
  readonly leftOnNode: string[];
  /** VMIs not on the new launcher at the end, each with its launcher and its migrations' phases. */
  readonly notUpdated: string[];
  /** The CR's status.outdatedVirtualMachineInstanceWorkloads at the end. */
  readonly outdatedCount: number | undefined;
  /** Evictions virt-api refused (429) during the drain. */
  readonly refusedEvictions: number;
  readonly migrationsCreated: number;
  readonly twoUnfinished: string[];
  readonly peaks: Peaks;
  /** The limits the run set and is judged by. */
  readonly limits: { readonly cluster: number; readonly perNode: number };
  readonly deadLetters: readonly DeadLetter[];
  readonly replay: ReplayReport | undefined;
  readonly poisonRecovered: boolean;
  readonly deadAfterReplay: readonly DeadLetter[];
  readonly injected: Record<string, number>;
}

const NS = 'default';
const POISON_VMI = 'drain-poison';
const NEW_TAG = 'v1.9.1';
const NEW_LAUNCHER = `quay.io/kubevirt/virt-launcher:${NEW_TAG}`;
/** The controllers a drain and an upgrade go through. */
const PARTS: readonly Controller[] = ['vmi', 'migration', 'evacuation', 'workload-updater'];
const quiet: Logger = { info() {}, warn() {}, error() {}, with: () => quiet };

/** Polls `cond` every 100 ms until it holds or `ms` pass; true when it held. */
async function within(ms: number, cond: () => Promise<boolean>, progress?: () => void): Promise<boolean> {
  const deadline = performance.now() + ms;
  let reported = performance.now();
  while (performance.now() < deadline) {
    if (await cond()) return true;
    if (progress && performance.now() - reported > 5000) {
      progress();
      reported = performance.now();
    }
    await sleep(100);
  }
  return cond();
}

const isDaemonSetPod = (p: { metadata?: { ownerReferences?: { kind?: string; controller?: boolean }[] } }) => (p.metadata?.ownerReferences ?? []).some((r) => r.controller && r.kind === 'DaemonSet');

/** `kubectl drain <node> --ignore-daemonsets --force`: cordon, then evict until no pod is left. */
async function drainNode(user: KubeClient, node: string, timeoutMs: number, progress?: () => void): Promise<{ done: boolean; refused: number }> {
  await user.patch(NODES, undefined, node, { type: 'merge', body: { spec: { unschedulable: true } } });
  let refused = 0;
  const done = await within(timeoutMs, async () => {
    const pods = (await user.list(PODS, undefined, { fieldSelector: `spec.nodeName=${node}` })).items.filter((p) => !isDaemonSetPod(p));
    if (pods.length === 0) return true;
    for (const p of pods) {
      if (p.metadata?.deletionTimestamp) continue;
      try {
        await user.evict(p.metadata?.namespace ?? NS, p.metadata?.name ?? '');
      } catch (err) {
        // 429: virt-api marked the VMI (or it is migrating); drain retries. Gone: fine.
        const status = (err as { status?: number }).status;
        if (status === 429) refused++;
        else if ((err as { reason?: string }).reason !== 'NotFound') throw err;
      }
    }
    await sleep(400);
    return false;
  }, progress);
  return { done, refused };
}

async function ours(user: KubeClient, names: readonly string[]): Promise<VirtualMachineInstance[]> {
  return (await user.list(VMIS, NS)).items.filter((v) => names.includes(v.metadata?.name ?? ''));
}

export async function runDrainChaos(opts: DrainChaosOptions = {}): Promise<DrainChaosReport> {
  const seed = opts.seed ?? Date.now() % 1_000_000;
  const random = seededRandom(seed);
  const say = opts.progress ?? (() => {});
  const phaseMs = opts.phaseTimeoutMs ?? 120_000;
  const speed = opts.speed ?? 5;
  const limits = opts.limits ?? { cluster: 5, perNode: 2 };
  const t0 = performance.now();
  const sandbox: Sandbox = await startSandbox({ nodes: 3, speed, timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50, kubevirtDeployMs: 10_000 } });
  const store = await openChaosStore(random, { backend: opts.backend ?? 'sqlite' });
  const { queue, state, slow } = store;
  const killer = new Killer(random, opts.killRate ?? 0.03);
  // The API server's refusals the controllers met, by status.
  const seen: Record<string, number> = {};
  const poisoned = new Set([POISON_VMI]);
  const metrics = new MetricsRegistry();
  const kubes = Object.fromEntries(PARTS.map((c) => [c, createKubeClient(sandbox.apiServer.kubeConfig(identityOf(c)), asProductCounting(seen))])) as Record<Controller, KubeClient>;
  const expectations = chaosExpectations(state.expectations, killer);
  const now = () => sandbox.clock.nowMs();
  const specs = DEFINITIONS.filter((d) => PARTS.includes(d.name)).map((def) =>
    bindController(def, {
      kube: kubes[def.name] ?? kubes.vmi,
      expectations,
      leases: state.leases,
      clusterConfig: cachedClusterConfig(kubes[def.name] ?? kubes.vmi),
      log: quiet,
      now,
      clockSpeed: speed,
      // A dead pass's expectations are taken over after 4 s of wall time (sandbox ms here): longer
      // than any live pass, as the function timeout would be in production.
      takeoverMs: 4000 * speed,
      virtApi: NO_VIRT_API,
      metrics,
    }),
  );
  const pools = specs.map(
    (spec) =>
      new WorkerPool({
        controller: spec.controller,
        concurrency: spec.controller === 'workload-updater' ? 1 : spec.controller === 'vmi' ? 10 : 3,
        queue: slow,
        handle: instrumented(spec, { kube: chaosKube(kubes[spec.controller], killer, poisoned, seen), metrics, log: opts.log ?? quiet, now, fences: expectations }),
        metrics,
        log: quiet,
      }),
  );
  const sender = new DuplicatingSender(withoutViewsOf(slow, poisoned), random);
  const relay = await startChaosRelay({ kubeConfig: sandbox.apiServer.kubeConfig(identityOf('relay')), queue: sender, metrics });
  const user = patientUser(createKubeClient(sandbox.apiServer.kubeConfig(USER_IDENTITY)));
  const faultLoop = startLaneFaults(sandbox, random, relay);
  const names = Array.from({ length: opts.vmis ?? 8 }, (_, i) => `drain-chaos-${i + 1}`);
  const [node01, ...others] = sandbox.nodeNames as [string, ...string[]];
  const unfinished: string[] = [];
  const setUnschedulable = (node: string, unschedulable: boolean) => user.patch(NODES, undefined, node, { type: 'merge', body: { spec: { unschedulable } } });
  // A progress line: migration phases, VMIs per node and launcher, queue depths.
  const snapshot = async () => {
    const migs = (await user.list(MIGRATIONS, NS)).items;
    const phases = new Map<string, number>();
    for (const m of migs) phases.set(m.status?.phase ?? 'new', (phases.get(m.status?.phase ?? 'new') ?? 0) + 1);
    const vmis = await ours(user, names);
    const where = vmis.map((v) => `${v.metadata?.name?.replace('drain-chaos-', '')}@${v.status?.nodeName}/${(v.status?.launcherContainerImageVersion ?? '?').split(':').pop()}`).join(' ');
    const depths = await Promise.all(PARTS.map(async (c) => `${c}:${JSON.stringify(await queue.depth(c))}`));
    const outdated = (await user.get(KUBEVIRTS, 'kubevirt', 'kubevirt'))?.status?.outdatedVirtualMachineInstanceWorkloads;
    return `${killer.crashes} kills, ${sender.duplicates} dups; outdated on the CR ${String(outdated)}; migrations ${JSON.stringify(Object.fromEntries(phases))}; ${where}; queues ${depths.join(' ')}`;
  };
  let drainSeconds = 0;
  let updateSeconds = 0;
  let refused = 0;
  let leftOnNode: string[] = [];
  let deadLetters: readonly DeadLetter[] = [];
  let replay: ReplayReport | undefined;
  let poisonRecovered = false;
  let ok = false;
  try {
    relay.start();
    for (const p of pools) p.start();
    await user.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', {
      type: 'merge',
      body: { spec: { workloadUpdateStrategy: { workloadUpdateMethods: ['LiveMigrate'] }, configuration: { migrations: { parallelMigrationsPerCluster: limits.cluster, parallelOutboundMigrationsPerNode: limits.perNode } } } },
    });
    // 1. everything on node01
    for (const n of others) await setUnschedulable(n, true);
    for (const n of names) await user.create(VMIS, vmiManifest(n, { evictionStrategy: 'LiveMigrate' }));
    await user.create(VMIS, vmiManifest(POISON_VMI, { evictionStrategy: 'LiveMigrate' }));
    const started = await within(phaseMs, async () => {
      const vmis = await ours(user, names);
      return vmis.length === names.length && vmis.every((v) => v.status?.phase === 'Running' && v.status.nodeName === node01 && v.status.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True'));
    });
    if (!started) unfinished.push('the VMIs never all ran on node01');
    for (const n of others) await setUnschedulable(n, false);
    say(`${names.length} VMIs Running on ${node01}; draining under chaos`);

    // 2. the drain
    const d0 = performance.now();
    const drain = await drainNode(user, node01, phaseMs, () => void snapshot().then((line) => say(`drain: ${line}`)));
    drainSeconds = Math.round((performance.now() - d0) / 100) / 10;
    refused = drain.refused;
    if (!drain.done) unfinished.push(`the drain did not finish in ${phaseMs / 1000} s`);
    leftOnNode = (await ours(user, names)).filter((v) => v.status?.nodeName === node01).map((v) => v.metadata?.name ?? '');
    say(`drain ${drain.done ? 'done' : 'NOT done'} in ${drainSeconds} s (${refused} evictions refused); ${killer.crashes} worker kills, ${sender.duplicates} duplicate deliveries so far`);

    // 3. the upgrade
    await setUnschedulable(node01, false);
    const u0 = performance.now();
    await user.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'merge', body: { spec: { imageTag: NEW_TAG } } });
    const updated = await within(phaseMs, async () => {
      const vmis = await ours(user, names);
      const kv = await user.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
      return vmis.every((v) => v.status?.phase === 'Running' && v.status.launcherContainerImageVersion === NEW_LAUNCHER) && kv?.status?.outdatedVirtualMachineInstanceWorkloads === 0;
    }, () => void snapshot().then((line) => say(`update: ${line}`)));
    updateSeconds = Math.round((performance.now() - u0) / 100) / 10;
    if (!updated) unfinished.push(`the update did not finish in ${phaseMs / 1000} s`);
    say(`update ${updated ? 'done' : 'NOT done'} in ${updateSeconds} s`);

    // 4. calm, then the DLQ: the poison is there; lifted and replayed, it runs
    await faultLoop.stop();
    killer.armed = false;
    if (store.aws) store.aws.armed = false;
    await within(10_000, async () => (await queue.listDeadLetters({ controller: 'vmi' })).some((l) => l.key === `${NS}/${POISON_VMI}`));
    deadLetters = await queue.listDeadLetters();
    poisoned.clear();
    replay = await queue.replay({ controller: 'vmi' });
    poisonRecovered = await within(phaseMs, async () => (await user.get(VMIS, NS, POISON_VMI))?.status?.phase === 'Running');
    ok = true;
  } finally {
    await faultLoop.stop();
    sender.stop();
    await relay.stop();
    await Promise.all(pools.map((p) => p.stop()));
    // A run that threw leaves no server behind (the real control plane outlives this process).
    if (!ok) {
      await store.close();
      await sandbox.stop();
    }
  }
  const deadAfterReplay = await queue.listDeadLetters();
  await store.close();
  const final = await ours(user, [...names, POISON_VMI]);
  const kv = await user.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
  const audit = sandbox.apiServer.audit.query();
  opts.onAudit?.(audit);
  const report: DrainChaosReport = {
    seed,
    seconds: Math.round((performance.now() - t0) / 100) / 10,
    drainSeconds,
    updateSeconds,
    unfinished,
    notRunning: [...names, POISON_VMI].filter((n) => final.find((v) => v.metadata?.name === n)?.status?.phase !== 'Running'),
    notRunningWhy: [...names, POISON_VMI].filter((n) => final.find((v) => v.metadata?.name === n)?.status?.phase !== 'Running' && n !== POISON_VMI).map((n) => lifeOf(audit, n)),
    leftOnNode,
    notUpdated: names
      .map((n) => final.find((v) => v.metadata?.name === n))
      .filter((v) => v?.status?.launcherContainerImageVersion !== NEW_LAUNCHER)
      .map((v) => `${v?.metadata?.name} (${v?.status?.phase} on ${v?.status?.launcherContainerImageVersion || 'unknown'}; migrations ${migrationsOf(audit, v?.metadata?.name ?? '')})`),
    outdatedCount: kv?.status?.outdatedVirtualMachineInstanceWorkloads,
    refusedEvictions: refused,
    migrationsCreated: audit.filter((e) => e.resource === 'virtualmachineinstancemigrations' && e.type === 'ADDED').length,
    twoUnfinished: vmisWithTwoUnfinished(audit),
    peaks: peaksFromAudit(audit),
    limits,
    deadLetters,
    replay,
    poisonRecovered,
    deadAfterReplay,
    injected: { ...faultLoop.injected, ...relay.injected, ...store.injected(), relayLists: relay.relists(), ...seen, workerKills: killer.crashes, duplicateDeliveries: sender.duplicates, abandonedReceipts: metrics.total('worker_crashes_total') },
  };
  await sandbox.stop();
  return report;
}

/** The last phase of each migration of `vmi`, from the audit log. */
function migrationsOf(audit: readonly { resource: string; type: string; object: unknown }[], vmi: string): string {
  const last = new Map<string, string>();
  for (const e of audit) {
    const m = e.object as { metadata?: { name?: string }; spec?: { vmiName?: string }; status?: { phase?: string } };
    if (e.resource === 'virtualmachineinstancemigrations' && m.spec?.vmiName === vmi) last.set(m.metadata?.name ?? '', e.type === 'DELETED' ? 'deleted' : (m.status?.phase ?? 'new'));
  }
  return [...last].map(([n, p]) => `${n}: ${p}`).join(', ') || 'none';
}

/**
 * A VMI's life as the audit log tells it, one line: each write to it (who, its phase, node and
 * launcher, a Failed reason), to its launcher pods (who, create / delete / phase, node) and its
 * migrations (who, phase) — what a VMI that ended Failed went through.
 */
export function lifeOf(audit: readonly AuditEntry[], vmi: string): string {
  const out: string[] = [];
  let last = '';
  for (const e of audit) {
    const o = e.object as { metadata?: { name?: string; ownerReferences?: { kind: string; name: string }[]; deletionTimestamp?: string }; spec?: { vmiName?: string; nodeName?: string }; status?: { phase?: string; nodeName?: string; reason?: string; launcherContainerImageVersion?: string; conditions?: { type: string; status: string; reason?: string }[] } };
    let line: string | undefined;
    if (e.resource === 'virtualmachineinstances' && e.name === vmi) {
      const ready = o.status?.conditions?.find((c) => c.type === 'Ready');
      line = `vmi ${e.verb}${e.subresource ? '/' + e.subresource : ''} by ${e.identity}: ${e.type === 'DELETED' ? 'gone' : `${o.status?.phase ?? '-'} on ${o.status?.nodeName ?? '-'} ${(o.status?.launcherContainerImageVersion ?? '').split(':').pop()}${ready ? ` Ready=${ready.status}/${ready.reason ?? ''}` : ''}${o.status?.reason ? ` reason ${o.status.reason}` : ''}`}`;
    } else if (e.resource === 'pods' && o.metadata?.ownerReferences?.some((r) => r.kind === 'VirtualMachineInstance' && r.name === vmi)) {
      line = `pod ${e.name} ${e.verb}${e.subresource ? '/' + e.subresource : ''} by ${e.identity}: ${e.type === 'DELETED' ? 'gone' : `${o.status?.phase ?? '-'} on ${o.spec?.nodeName ?? '-'}${o.metadata?.deletionTimestamp ? ' deleting' : ''}`}`;
    } else if (e.resource === 'virtualmachineinstancemigrations' && o.spec?.vmiName === vmi) {
      line = `migration ${e.name} ${e.verb} by ${e.identity}: ${e.type === 'DELETED' ? 'gone' : (o.status?.phase ?? 'new')}`;
    }
    if (line === undefined || line === last) continue;
    last = line;
    out.push(`${new Date(e.time).toISOString().slice(11, 23)} ${line}`);
  }
  return `${vmi}: ${out.slice(-60).join(' | ')}`;
}

/** What must hold after a run; an empty list means it passed. `limits: false` leaves the migration limits out (the real lane's known slip). */
export function drainChaosViolations(r: DrainChaosReport, opts: { limits?: boolean } = {}): string[] {
  const out: string[] = [...r.unfinished];
  if (r.notRunning.length) out.push(`not Running at the end: ${r.notRunning.join(', ')}${r.notRunningWhy.length ? ` — ${r.notRunningWhy.join('; ')}` : ''}`);
  if (r.leftOnNode.length) out.push(`still on the drained node after the drain: ${r.leftOnNode.join(', ')}`);
  if (r.notUpdated.length) out.push(`not on the new launcher: ${r.notUpdated.join(', ')}`);
  if (r.outdatedCount !== 0) out.push(`outdated count on the CR ${String(r.outdatedCount)}, not 0`);
  if (r.refusedEvictions === 0) out.push('virt-api never refused an eviction: the drain did not go through the webhook');
  if (r.twoUnfinished.length) out.push(`two unfinished migrations at once for: ${r.twoUnfinished.join(', ')}`);
  if (opts.limits !== false) {
    if (r.peaks.cluster > r.limits.cluster) out.push(`${r.peaks.cluster} migrations running in the cluster at once (limit ${r.limits.cluster})`);
    if (r.peaks.perNode > r.limits.perNode) out.push(`${r.peaks.perNode} migrations leaving ${r.peaks.perNodeAt} at once (limit ${r.limits.perNode})`);
  }
  const poison = r.deadLetters.find((d) => d.key === `${NS}/${POISON_VMI}`);
  if (!poison) out.push('the poison key is not in the DLQ');
  else if (poison.reason !== 'PoisonKey') out.push(`the poison key was dead-lettered with reason ${poison.reason}, not PoisonKey`);
  const unexpected = r.deadLetters.filter((d) => d.key !== `${NS}/${POISON_VMI}`);
  if (unexpected.length) out.push(`keys dead-lettered by chaos alone: ${unexpected.map((d) => `${d.controller} ${d.key} (${d.reason}: ${d.message})`).join('; ')}`);
  if (!r.replay?.moved.some((m) => m.key === `${NS}/${POISON_VMI}`)) out.push('the replay did not move the poison key');
  if (!r.poisonRecovered) out.push('the replayed poison VMI never reached Running');
  if (r.deadAfterReplay.length) out.push(`left in the DLQ after the replay: ${r.deadAfterReplay.map((d) => d.key).join(', ')}`);
  return out;
}
