/**
 * A VMI replica set scaled 0 → N (BENCH_RS_REPLICAS, default 500; 100 with BENCH_QUICK=1) through
 * `/scale`, as `kubectl scale` does, on a fresh sandbox per system (in a child process, support/cluster.ts): the serverless path (relay →
 * SQLite queue → replica set and VMI workers → table) side by side with the in-process baseline
 * (informers → in-memory workqueues → the same replica set and VMI reconciles, expectations in
 * memory). Figures: seconds from the scale request to the last replica Running (sandbox clock),
 * API calls per replica (the replica set controller's alone, and everything the controllers'
 * identity sent), the replica set's reconciles, and how many VMIs it created (N when nothing
 * was created twice). Never a test: nothing fails on speed.
 */
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../shared/api/index.ts';
import { VMI_REPLICA_SETS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { startSystem, type RunningSystem, type SystemName } from './support/systems.ts';
import { startCluster } from './support/cluster.ts';
import { CONTROLLER_IDENTITY, USER_IDENTITY, vmiManifest, waitUntil, waitUntilAsync } from './support/vmi-run.ts';

const N = Number(process.env.BENCH_RS_REPLICAS ?? (process.env.BENCH_QUICK === '1' ? 100 : 500));
const SYSTEMS: SystemName[] = ['baseline', 'serverless'];
const RS = 'bench-rs';
const NS = 'default';

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

/** One controller's API calls by `verb resource`, from the system's metrics. */
function callsOf(sys: RunningSystem, controller: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const r of sys.metrics.series('apiserver_requests_total')) {
    if (r.labels.controller !== controller) continue;
    const call = `${r.labels.verb} ${r.labels.resource}`;
    calls[call] = (calls[call] ?? 0) + r.value;
  }
  return calls;
}

const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const perReplica = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort().map(([k, v]) => [k, round(v / N, 3)]));

async function scaleRun(name: SystemName) {
  say(`${name}: replica set 0 → ${N}`);
  const cluster = await startCluster({ vmis: N, identities: [CONTROLLER_IDENTITY, USER_IDENTITY] });
  const sys = await startSystem(name, cluster, { replicaSets: true });
  const user = createKubeClient(cluster.kubeConfig(USER_IDENTITY));
  const running = new Map<string, number>();
  let created = 0;
  let uid: string | undefined;
  const unsubscribe = cluster.onMilestone((e) => {
    if (e.kind !== 'vmi' || !uid || e.ownerUid !== uid) return;
    if (e.verb === 'create') created++;
    if (e.phase === 'Running' && !running.has(e.name)) running.set(e.name, e.time);
  });
  try {
    const template = vmiManifest('template') as { spec: VirtualMachineInstance['spec'] };
    const labels = { app: RS };
    const rs = await user.create(VMI_REPLICA_SETS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceReplicaSet',
      metadata: { name: RS, namespace: NS },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: template.spec } },
    } as VirtualMachineInstanceReplicaSet);
    uid = rs.metadata?.uid;
    // Let the controller annotate and write the empty status before the clock starts.
    await new Promise((r) => setTimeout(r, 1500));
    const countersBefore = (await cluster.counters()).filter((c) => c.identity === CONTROLLER_IDENTITY).reduce((a, c) => a + c.count, 0);
    const rsCallsBefore = total(callsOf(sys, 'replicaset'));
    const t0 = cluster.nowMs();
    await user.updateScale(VMI_REPLICA_SETS, NS, RS, N);
    const ok = await waitUntil(() => running.size >= N, 600_000, () => say(`${name}: ${running.size}/${N} Running, ${created} created`));
    const seconds = (Math.max(...running.values()) - t0) / 1000;
    // Trailing reconciles (status with readyReplicas) before counting.
    const statusOk = await waitUntilAsync(async () => (await user.get(VMI_REPLICA_SETS, NS, RS))?.status?.readyReplicas === N, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    const identityCalls = (await cluster.counters()).filter((c) => c.identity === CONTROLLER_IDENTITY).reduce((a, c) => a + c.count, 0) - countersBefore;
    const rsCalls = callsOf(sys, 'replicaset');
    const rsReconciles = sys.metrics.total('reconcile_time_seconds', { controller: 'replicaset' });
    const figures = {
      replicas: N,
      allRunning: ok,
      statusReadyReplicas: statusOk,
      secondsToAllRunning: round(seconds),
      replicasPerSecond: round(N / seconds, 1),
      vmisCreated: created,
      replicaSetApiCallsPerReplica: round((total(rsCalls) - rsCallsBefore) / N, 3),
      replicaSetCallsPerReplica: perReplica(rsCalls),
      replicaSetReconciles: rsReconciles,
      allControllersApiCallsPerReplica: round(identityCalls / N, 2),
      vmiControllerApiCallsPerReplica: round(total(callsOf(sys, 'vmi')) / N, 2),
      tableOpsPerReplica: round((sys.table.reads + sys.table.writes) / N, 2),
    };
    say(`${name}: ${figures.secondsToAllRunning} s to all Running, ${figures.replicaSetApiCallsPerReplica} replica set calls/replica, ${figures.allControllersApiCallsPerReplica} calls/replica in all, ${rsReconciles} replica set reconciles`);
    return figures;
  } finally {
    unsubscribe();
    await sys.stop();
    await cluster.stop();
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const results: Record<string, Awaited<ReturnType<typeof scaleRun>>> = {};
  for (const s of SYSTEMS) results[s] = await scaleRun(s);
  const b = results.baseline!;
  const s = results.serverless!;
  return {
    replicas: N,
    scale: results,
    ratios: {
      secondsToAllRunning: round(s.secondsToAllRunning / b.secondsToAllRunning),
      replicaSetApiCallsPerReplica: round(s.replicaSetApiCallsPerReplica / Math.max(0.001, b.replicaSetApiCallsPerReplica)),
    },
  };
}
