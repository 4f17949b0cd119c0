/**
 * KubeVirt's workload-update controller as one stateless reconcile, keyed by the **KubeVirt CR**
 * (`namespace/name`; reference node-drain-updates §3): observe the CR → expectations gate → only
 * once a rollout is complete (Deployed, deployment ids agree) → classify the running VMIs
 * (outdated launcher, hot-plug or volume change) → write the outdated count to the CR's status →
 * migrate within the per-cluster budget, evict in batches, abort stale changes → re-run on the
 * durable schedule while anything is left to do.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { KUBEVIRTS, MIGRATIONS, PODS, VMIS, type KubeVirt, type VirtualMachineInstance } from '../../shared/api/index.ts';
import { isFinalMigration } from '../../shared/api/vmi-eviction.ts';
import { APP_LABEL } from '../../shared/api/well-known.ts';
import { TransientError, errorText } from '../../shared/errors.ts';
import { done, requeueAfter, type Outcome, type ReconcileContext, waitAfter } from '../../shared/reconcile/outcome.ts';
import { periodicRecheck } from '../../shared/reconcile/periodic.ts';
import { answeredCreations, expectationsGate } from '../../shared/reconcile/expectations-gate.ts';
import { clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import { abortChange, createMigration, evictVmi } from './actions.ts';
import { batchSettingsOf, migrationCount, REENQUEUE_SECONDS } from './batch.ts';
import { classify, isRolloutComplete, updateMethodsOf, workloadUpdateMigrationsOf } from './classify.ts';
import { OUTDATED_VMIS_GAUGE, OUTDATED_VMIS_HELP, WORKLOAD_UPDATE_EXPECTATIONS, type WorkloadUpdaterDeps } from './deps.ts';

/**
 * `defaultThrottleInterval`: KubeVirt enqueues the key 5 s after each event, so migrations are
 * created in rounds at least this far apart (a migration created in one round has started, and
 * counts against the budget, by the next).
 */
export const THROTTLE_SECONDS = 5;

/** How often to look again while the cached cluster config lags the CR (its cache lives 5 s). */
const CONFIG_SETTLE_SECONDS = 1;

export async function reconcileWorkloadUpdate(key: string, deps: WorkloadUpdaterDeps, ctx: ReconcileContext = {}): Promise<Outcome> {
  const [namespace = '', name = ''] = key.split('/');
  // observe
  const kv = await deps.kube.get(KUBEVIRTS, namespace, name, { resourceVersion: ctx.minResourceVersion });
  if (!kv) {
    await deps.expectations.delete(WORKLOAD_UPDATE_EXPECTATIONS, key);
    return done;
  }
  // expectations gate
  // As the evacuation controller's: the create's answer is the observation, so an unsatisfied
  // record is a pass that died mid-way; the key waits for the record to expire (or be taken over).
  const gate = await expectationsGate(answeredCreations(WORKLOAD_UPDATE_EXPECTATIONS, key, 'workload-update migration'), undefined, deps);
  if (gate.kind === 'wait') return waitAfter(gate.seconds, 'workload update expectations pending');
  // Mid-upgrade: nothing, not even the status (the CR's own update event brings us back).
  if (!isRolloutComplete(kv)) return done;
  const config = await deps.clusterConfig();
  // The launcher image the migrations' target pods will get comes from the cached cluster
  // config; right after a rollout it may still name the old one. Acting then would "update"
  // VMIs onto the old launcher, so wait (wall-clock seconds: the cache ages on the wall clock).
  if (clusterConfigFromKubeVirt(kv).launcherImage !== config.launcherImage) return requeueAfter(CONFIG_SETTLE_SECONDS, 'cluster config cache catching up with the rollout');
  const [vmis, migrations] = await Promise.all([deps.kube.list(VMIS, undefined), deps.kube.list(MIGRATIONS, undefined)]);
  // desired
  const now = deps.now();
  const c = classify(vmis.items, migrations.items, updateMethodsOf(kv), config.launcherImage, now);
  // status (before any action, as upstream): the gauge, then the CR's count
  deps.metrics?.set(OUTDATED_VMIS_GAUGE, OUTDATED_VMIS_HELP, {}, c.allOutdated.length);
  await writeOutdatedCount(kv, c.allOutdated.length, deps);
  if (c.migratable.length + c.evict.length + c.abort.length === 0) return done;
  // act
  const toMigrate = await migrationRound(key, shuffled(c.migratable, deps.random ?? Math.random), migrationCount(c.migratable.length, c.activeMigrations, config.migrations.parallelMigrationsPerCluster), deps);
  const toEvict = await evictionBatch(key, kv, c.evict, deps);
  const pods = await podsOf([...toEvict], deps);
  const unfinished = migrations.items.filter((m) => !isFinalMigration(m));
  const failures = await Promise.all([
    ...toMigrate.map((vmi) => createMigration(vmi, key, deps)),
    ...toEvict.map((vmi) => evictVmi(vmi, pods.get(vmi.metadata?.namespace ?? '') ?? [], deps)),
    ...c.abort.map((vmi) => abortChange(vmi, workloadUpdateMigrationsOf(vmi, unfinished), deps)),
  ]);
  const first = failures.find((f) => f !== undefined);
  if (first) throw new TransientError('WorkloadUpdateFailed', first);
  // Upstream re-adds after "30" — 30 ns, a busy loop; 30 s was meant (REENQUEUE_SECONDS). A
  // throttled round asks again sooner, when the throttle has passed.
  if (c.migratable.length > toMigrate.length && toMigrate.length === 0 && (await throttled(key, deps))) {
    return requeueAfter(THROTTLE_SECONDS / (deps.clockSpeed ?? 1), 'workload update throttle');
  }
  return periodicRecheck(deps, 'workload-updater', key, REENQUEUE_SECONDS, 'workload update re-run');
}

/** `status.outdatedVirtualMachineInstanceWorkloads`, written only when it changes. */
async function writeOutdatedCount(kv: KubeVirt, count: number, deps: WorkloadUpdaterDeps): Promise<void> {
  const old = kv.status?.outdatedVirtualMachineInstanceWorkloads;
  if (old === count) return;
  const path = '/status/outdatedVirtualMachineInstanceWorkloads';
  const ops = old === undefined || old === null ? [{ op: 'add' as const, path, value: count }] : [{ op: 'test' as const, path, value: old }, { op: 'replace' as const, path, value: count }];
  try {
    await deps.kube.patch(KUBEVIRTS, kv.metadata?.namespace ?? '', kv.metadata?.name ?? '', { type: 'json', ops }, { subresource: 'status' });
  } catch (err) {
    throw new TransientError('FailedPatchStatus', `unable to patch kubevirt obj status to update the outdatedVirtualMachineInstanceWorkloads valued: ${errorText(err)}`, { cause: err });
  }
}

/** The migrations of this round: the first `count` of the shuffled list, at most one round per throttle interval. */
async function migrationRound(key: string, migratable: VirtualMachineInstance[], count: number, deps: WorkloadUpdaterDeps): Promise<VirtualMachineInstance[]> {
  if (count === 0) return [];
  const now = deps.now();
  if (!(await deps.leases.acquire(`workload-updater/throttle/${key}`, `round-${now}`, 1, now, THROTTLE_SECONDS * 1000))) return [];
  await deps.expectations.expectCreations(WORKLOAD_UPDATE_EXPECTATIONS, key, count, now);
  return migratable.slice(0, count);
}

/** True while the creation throttle is held (a round ran less than THROTTLE_SECONDS ago). */
async function throttled(key: string, deps: WorkloadUpdaterDeps): Promise<boolean> {
  return (await deps.leases.holders(`workload-updater/throttle/${key}`, deps.now())).length > 0;
}

/**
 * The eviction batch: at most `batchEvictionSize` once per `batchEvictionInterval`. KubeVirt keeps
 * `lastDeletionBatch` in memory; here it is a lease in the state table that lives for one
 * interval, so it survives restarts and is shared by concurrent functions. Size 0 still starts an
 * interval, as upstream.
 */
async function evictionBatch(key: string, kv: KubeVirt, evict: VirtualMachineInstance[], deps: WorkloadUpdaterDeps): Promise<VirtualMachineInstance[]> {
  if (evict.length === 0) return [];
  const settings = batchSettingsOf(kv);
  const now = deps.now();
  const started = await deps.leases.acquire(`workload-updater/batch/${key}`, `batch-${now}`, 1, now, Math.max(1, settings.intervalMs));
  return started ? evict.slice(0, settings.size) : [];
}

/** The launcher pods of the namespaces of `vmis` (the current pod of each is evicted). */
async function podsOf(vmis: readonly VirtualMachineInstance[], deps: WorkloadUpdaterDeps): Promise<Map<string, V1Pod[]>> {
  const namespaces = [...new Set(vmis.map((v) => v.metadata?.namespace ?? ''))];
  const lists = await Promise.all(namespaces.map(async (ns) => [ns, (await deps.kube.list(PODS, ns, { labelSelector: APP_LABEL })).items] as const));
  return new Map(lists);
}

/** Fisher–Yates with the deps' random source (upstream shuffles the migratable list). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
