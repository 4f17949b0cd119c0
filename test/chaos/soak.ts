/**
 * The soak (`npm run chaos -- --soak 60m`; not in CI): every controller on a chaos rig (rig.ts),
 * faults on the whole time, and a steady churn — one user action every `actionMs`: VMIs created
 * and deleted, VMs created, stopped, started and deleted, a replica set and a pool scaled, VMIs
 * migrated, a node's launcher pods evicted (a drain) and the node uncordoned again, VMs
 * snapshotted and the snapshots deleted — plus one poisoned VMI. On the emulator lane the cluster
 * runs in a process of its own (rig.ts, startRigApart), so this process holds the product and the
 * harness alone. Every minute each process's memory (the heap retained after a full garbage
 * collection, and resident memory) and the queues' depth are sampled, and the audit log written since the last minute is replayed by the invariants (one
 * launcher pod per VMI at every instant, the replica set never above its spec.replicas) and
 * dropped: an hour of churn writes ~45,000 entries, each holding the object version it wrote, and
 * a log kept whole was most of the process's memory growth (docs/reliability.md, "The soak"). At the end the slopes (least squares, per
 * hour, after the warm-up: two minutes, on a run of 20 minutes or more six — the cluster's Events
 * live five minutes, {@link SOAK_EVENT_TTL_MS}) are reported, the faults stop, the cluster must
 * converge and the DLQ must hold the poison only.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { VirtualMachine, VirtualMachineInstanceReplicaSet, VirtualMachinePool } from '../../shared/api/index.ts';
import { EVENTS, MIGRATIONS, NODES, PODS, VM_POOLS, VM_SNAPSHOTS, VMI_REPLICA_SETS, VMIS, VMS } from '../../shared/api/resources.ts';
import { CONTROLLERS } from '../../shared/queue/message.ts';
import type { DeadLetter } from '../../shared/queue/port.ts';
import { vmiManifest, vmManifest } from '../e2e/support.ts';
import { launcherOf, OverLimit } from './audit-invariants.ts';
import { startRig, startRigApart, type RigCore, type RigOptions } from './rig.ts';
import { REAL } from '../support/lanes.ts';
import { ReplicaSetWithinSpec } from './run-replicaset-chaos.ts';
import type { ChaosBackend } from './store.ts';

export interface SoakOptions {
  readonly minutes: number;
  readonly seed?: number;
  readonly backend?: ChaosBackend;
  /** One user action every this many ms. Default 1500. */
  readonly actionMs?: number;
  /** Only these of the churn's actions (default all, {@link SOAK_ACTIONS}): to replay a seed with a narrower mix. */
  readonly actions?: readonly string[];
  /**
   * Write a V8 heap snapshot here after the warm-up (minute 2, or 6 on a long run) and at the end, before calm: what
   * grew between them, by constructor, is what a heap slope is made of.
   */
  readonly heapSnapshotDir?: string;
  /**
   * Where the cluster (the emulator and the simulated nodes) runs: `apart`, in a process of its own
   * (the default on the emulator lane), so that this process's memory is the product's and the
   * harness's alone; or `in-process`, as the other chaos runs have it (the real lane always: its
   * faults restart the control plane's processes from here).
   */
  readonly cluster?: 'apart' | 'in-process';
  readonly progress?: (line: string) => void;
}

export interface SoakSample {
  readonly minute: number;
  /** This process's JS heap retained after a full garbage collection: with the cluster apart, the product's and the harness's. */
  readonly heapMb: number;
  readonly rssMb: number;
  /** With the cluster apart, its process's retained heap and resident memory. */
  readonly clusterHeapMb?: number;
  readonly clusterRssMb?: number;
  readonly queued: number;
  /**
   * Objects the cluster keeps that the churn only adds to: Events (kube-apiserver expires them after
   * an hour, `--event-ttl`; the emulator keeps them) and migrations (nobody deletes them). On the
   * emulator lane they are in this process's heap too.
   */
  readonly events: number;
  readonly migrations: number;
}

export interface SoakReport {
  readonly seed: number;
  readonly backend: ChaosBackend;
  readonly minutes: number;
  /** Where the cluster ran ({@link SoakOptions.cluster}). */
  readonly cluster: 'apart' | 'in-process';
  readonly actions: Record<string, number>;
  readonly injected: Record<string, number>;
  readonly samples: readonly SoakSample[];
  /** Least-squares slopes per hour. */
  readonly slopes: { heapMbPerHour: number; rssMbPerHour: number; queuedPerHour: number; eventsPerHour: number; clusterHeapMbPerHour?: number; clusterRssMbPerHour?: number };
  readonly deadLetters: readonly DeadLetter[];
  /** Audit-log entries the invariants replayed (the whole run's writes). */
  readonly auditEntriesChecked: number;
  readonly violations: string[];
  /** For each of the first replica-set overshoots, the writes that led to it (ReplicaSetWithinSpec.trails). */
  readonly trails: string[][];
}

/** A full garbage collection, without starting the process with --expose-gc. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/**
 * How long the cluster keeps an Event (kube-apiserver's `--event-ttl`, here 5 minutes, not its
 * default hour): on the emulator lane the cluster's objects are in this process's heap, and an
 * hour of Events (~11,000, 2.7 KB each) was two thirds of its growth. Expiring them, the heap after
 * the warm-up is the product's and the harness's; the real lane's Events are kube-apiserver's.
 */
export const SOAK_EVENT_TTL_MS = 5 * 60_000;

/** The churn's actions, in the order the soak's mix lists them. */
export const SOAK_ACTIONS = ['createVmi', 'deleteVmi', 'createVm', 'toggleVm', 'deleteVm', 'scaleRs', 'scalePool', 'migrate', 'drain', 'snapshot'] as const;

const NS = 'default';
const POISON = 'soak-poison';

/** The least-squares slope of y over x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const say = opts.progress ?? (() => {});
  const placement = opts.cluster ?? (REAL ? 'in-process' : 'apart');
  const rigOptions: RigOptions = { ...(opts.seed !== undefined ? { seed: opts.seed } : {}), backend: opts.backend ?? 'sqlite', killRate: 0.02, apiServerRestarts: Math.max(2, Math.round(opts.minutes / 10)), sandbox: { nodes: 3, storage: { snapshotCreateMs: 100, snapshotReadyMs: 100, provisionMs: 50 }, eventTtlMs: SOAK_EVENT_TTL_MS } };
  const rig: RigCore = placement === 'apart' ? await startRigApart(rigOptions) : await startRig(rigOptions);
  const { user, random } = rig;
  const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(random() * xs.length)];
  const actions: Record<string, number> = {};
  const did = (a: string) => (actions[a] = (actions[a] ?? 0) + 1);
  const samples: SoakSample[] = [];
  // The warm-up (the sandbox, caches and pools filling; on a long run also the cluster's Events
  // until the first expire): left out of the slopes when there is more than that to fit.
  const warmup = opts.minutes >= 20 ? SOAK_EVENT_TTL_MS / 60_000 + 1 : 2;
  const violations: string[] = [];
  let seq = 0;
  const ours = async (prefix: string) => (await user.list(VMIS, NS)).items.filter((v) => v.metadata?.name?.startsWith(prefix) && !v.metadata.deletionTimestamp);
  const vms = async () => (await user.list(VMS, NS)).items.filter((v) => v.metadata?.name?.startsWith('soak-vm-') && !v.metadata.deletionTimestamp);
  const churn: Record<(typeof SOAK_ACTIONS)[number], () => Promise<void>> = {
    async createVmi() {
      if ((await ours('soak-vmi-')).length < 15) await user.create(VMIS, vmiManifest(`soak-vmi-${++seq}`, { evictionStrategy: 'LiveMigrate' }));
    },
    async deleteVmi() {
      const v = pick(await ours('soak-vmi-'));
      if (v) await user.delete(VMIS, NS, v.metadata?.name ?? '');
    },
    async createVm() {
      if ((await vms()).length < 8) await user.create(VMS, vmManifest(`soak-vm-${++seq}`, { runStrategy: 'Always' } as Partial<VirtualMachine['spec']>));
    },
    async toggleVm() {
      const vm = pick(await vms());
      if (vm) await user.patch(VMS, NS, vm.metadata?.name ?? '', { type: 'merge', body: { spec: { runStrategy: vm.spec.runStrategy === 'Halted' ? 'Always' : 'Halted' } } });
    },
    async deleteVm() {
      const vm = pick(await vms());
      if (vm) await user.delete(VMS, NS, vm.metadata?.name ?? '');
    },
    async scaleRs() {
      await user.updateScale(VMI_REPLICA_SETS, NS, 'soak-rs', Math.floor(random() * 7));
    },
    async scalePool() {
      await user.patch(VM_POOLS, NS, 'soak-pool', { type: 'merge', body: { spec: { replicas: 1 + Math.floor(random() * 3) } } });
    },
    async migrate() {
      const v = pick((await ours('soak-vmi-')).filter((x) => x.status?.phase === 'Running'));
      if (v) await user.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { generateName: 'soak-mig-', namespace: NS }, spec: { vmiName: v.metadata?.name ?? '' } });
    },
    async drain() {
      const node = pick(rig.cluster.nodeNames);
      if (!node) return;
      await user.patch(NODES, undefined, node, { type: 'merge', body: { spec: { unschedulable: true } } });
      const pods = (await user.list(PODS, NS, { fieldSelector: `spec.nodeName=${node}`, labelSelector: 'kubevirt.io=virt-launcher' })).items;
      for (const p of pods) await user.evict(NS, p.metadata?.name ?? '').catch(() => undefined);
      // Back in service a little later, whatever the drain achieved.
      setTimeout(() => void user.patch(NODES, undefined, node, { type: 'merge', body: { spec: { unschedulable: false } } }).catch(() => undefined), 15_000).unref();
    },
    async snapshot() {
      const vm = pick(await vms());
      const snaps = (await user.list(VM_SNAPSHOTS, NS)).items;
      if (snaps.length >= 4) await user.delete(VM_SNAPSHOTS, NS, snaps[0]?.metadata?.name ?? '');
      else if (vm) await user.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { generateName: 'soak-snap-', namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm.metadata?.name ?? '' } } });
    },
  };
  const names = opts.actions?.length ? [...opts.actions] : Object.keys(churn);
  const unknown = names.filter((n) => !(n in churn));
  const act = (n: string) => churn[n as keyof typeof churn];
  if (unknown.length) throw new Error(`unknown soak action(s) ${unknown.join(', ')}: the soak's actions are ${SOAK_ACTIONS.join(', ')}`);
  // The invariants replay the log as it comes, a minute at a time, and the replayed part is dropped.
  const launcherPods = new OverLimit('pods', launcherOf);
  const replicaSet = new ReplicaSetWithinSpec('soak-rs');
  const overs: string[] = [];
  const overshoots: string[] = [];
  let auditEntriesChecked = 0;
  const checkAuditSoFar = async () => {
    const batch = await rig.cluster.drainAudit();
    auditEntriesChecked += batch.length;
    overs.push(...launcherPods.feed(batch));
    overshoots.push(...replicaSet.feed(batch));
  };
  const gc = collector();
  const sample = async (minute: number) => {
    const depths = await Promise.all(CONTROLLERS.map((c) => rig.store.queue.depth(c)));
    const queued = depths.reduce((a, d) => a + d.visible + d.inFlight, 0);
    // A count the faults kept from being read repeats the last one, rather than a 0 that would bend the slope.
    const last = samples.at(-1);
    const [events, migrations] = await Promise.all(
      ([[EVENTS, last?.events], [MIGRATIONS, last?.migrations]] as const).map(async ([r, before]) => (await user.list(r, NS).then((l) => l.items.length, () => undefined)) ?? before ?? 0),
    );
    await checkAuditSoFar();
    gc();
    const m = process.memoryUsage();
    // The cluster's own process, when it has one (a full collection there too).
    const clusterHeap = await rig.cluster.heapBytes?.();
    const clusterRss = await rig.cluster.rssBytes?.();
    const apart = clusterHeap !== undefined && clusterRss !== undefined ? { clusterHeapMb: Math.round(clusterHeap / 1e5) / 10, clusterRssMb: Math.round(clusterRss / 1e5) / 10 } : {};
    // The first sample past the warm-up (a loaded machine skips minutes) and the last.
    const firstSteady = minute >= warmup && !samples.some((x) => x.minute >= warmup);
    if (opts.heapSnapshotDir && (firstSteady || minute === opts.minutes)) say(`heap snapshot at minute ${minute}: ${v8.writeHeapSnapshot(join(opts.heapSnapshotDir, `soak-${rig.seed}-minute-${minute}.heapsnapshot`))}`);
    samples.push({ minute, heapMb: Math.round(m.heapUsed / 1e5) / 10, rssMb: Math.round(m.rss / 1e5) / 10, ...apart, queued, events: events ?? 0, migrations: migrations ?? 0 });
    const cl = samples.at(-1)?.clusterHeapMb !== undefined ? ` (cluster apart: heap ${samples.at(-1)?.clusterHeapMb} MB, rss ${samples.at(-1)?.clusterRssMb} MB)` : '';
    say(`minute ${minute}: heap ${samples.at(-1)?.heapMb} MB, rss ${samples.at(-1)?.rssMb} MB${cl}, queued ${queued}, events ${events}, migrations ${migrations}; ${JSON.stringify(actions)}; injected ${JSON.stringify(rig.injected())}`);
  };
  try {
    const labels = { soak: 'rs' };
    const spec = vmiManifest('template', { evictionStrategy: 'LiveMigrate' }).spec;
    await user.create(VMI_REPLICA_SETS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', metadata: { name: 'soak-rs', namespace: NS }, spec: { replicas: 3, selector: { matchLabels: labels }, template: { metadata: { labels }, spec } } } as VirtualMachineInstanceReplicaSet);
    await user.create(VM_POOLS, {
      apiVersion: 'pool.kubevirt.io/v1beta1',
      kind: 'VirtualMachinePool',
      metadata: { name: 'soak-pool', namespace: NS },
      spec: { replicas: 2, selector: { matchLabels: { pool: 'soak' } }, virtualMachineTemplate: { metadata: { labels: { pool: 'soak' } }, spec: { runStrategy: 'Always', template: { metadata: { labels: { pool: 'soak' } }, spec } } } },
    } as VirtualMachinePool);
    rig.poisoned.add(POISON);
    await user.create(VMIS, vmiManifest(POISON));
    await rig.start();
    const t0 = performance.now();
    const end = t0 + opts.minutes * 60_000;
    let nextSample = t0;
    while (performance.now() < end) {
      if (performance.now() >= nextSample) {
        await sample(Math.round((performance.now() - t0) / 60_000));
        // Behind (a slow action on a loaded machine): the next sample a minute from now, not a burst of them.
        nextSample = Math.max(nextSample + 60_000, performance.now() + 30_000);
      }
      const a = pick(names)!;
      // A refused action (409, a VM already gone) is the user's race, not the product's.
      await act(a)().then(() => did(a), () => did(`${a} refused`));
      await sleep(opts.actionMs ?? 1500);
    }
    await sample(opts.minutes);
    say('soak: faults off; waiting for the cluster to converge');
    await rig.calm();
    rig.poisoned.clear();
    const converged = async () => {
      const rs = await user.get(VMI_REPLICA_SETS, NS, 'soak-rs');
      const live = (await ours('soak-rs')).length;
      const vmsUp = await vms();
      const running = await Promise.all(vmsUp.filter((v) => v.spec.runStrategy === 'Always').map(async (v) => (await user.get(VMIS, NS, v.metadata?.name ?? ''))?.status?.phase === 'Running'));
      return rs?.status?.replicas === rs?.spec?.replicas && live === rs?.spec?.replicas && running.every(Boolean);
    };
    const deadline = performance.now() + 180_000;
    while (!(await converged()) && performance.now() < deadline) await sleep(1000);
    if (!(await converged())) violations.push('the cluster did not converge within 3 minutes of calm (replica set, running VMs)');
  } catch (err) {
    await rig.stop();
    throw err;
  }
  const deadLetters = await rig.store.queue.listDeadLetters();
  const unexpected = deadLetters.filter((d) => d.key !== `${NS}/${POISON}`);
  if (unexpected.length) violations.push(`dead-lettered beyond the poison: ${unexpected.map((d) => `${d.controller} ${d.key} (${d.reason}: ${d.message})`).join('; ')}`);
  if (!deadLetters.some((d) => d.key === `${NS}/${POISON}`)) violations.push('the poison is not in the DLQ');
  await checkAuditSoFar();
  violations.push(...overs.slice(0, 5).map((x) => `two launcher pods for one VMI: ${x}`));
  violations.push(...overshoots.slice(0, 5).map((x) => `replica set above spec.replicas: ${x}`));
  const injected = rig.injected();
  await rig.stop();
  const steady = samples.length > warmup + 3 ? samples.filter((s) => s.minute >= warmup) : samples;
  const perHour = (f: (s: SoakSample) => number) => Math.round(slope(steady.map((s) => ({ x: s.minute / 60, y: f(s) }))) * 10) / 10;
  return {
    seed: rig.seed,
    backend: rig.store.backend,
    minutes: opts.minutes,
    cluster: placement,
    actions,
    injected,
    samples,
    slopes: { heapMbPerHour: perHour((s) => s.heapMb), rssMbPerHour: perHour((s) => s.rssMb), queuedPerHour: perHour((s) => s.queued), eventsPerHour: perHour((s) => s.events), ...(placement === 'apart' ? { clusterHeapMbPerHour: perHour((s) => s.clusterHeapMb ?? 0), clusterRssMbPerHour: perHour((s) => s.clusterRssMb ?? 0) } : {}) },
    deadLetters,
    auditEntriesChecked,
    violations,
    trails: replicaSet.trails.slice(0, 5),
  };
}
