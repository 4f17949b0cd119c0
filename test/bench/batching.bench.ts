/**
 * What batching keys per invocation costs and buys (issue 17, goal 6), side by side in one run:
 * the same burst of VMIs on a fresh sandbox with the local runtime, whose workers play Lambda
 * instances (one batch = one invocation: its keys reconciled concurrently, their trace entries
 * written once), at batch 1 and at batch 10, alternating which goes first.
 *
 * Figures per batch size: invocations, keys per invocation, an invocation's wall time (what
 * Lambda bills: the slowest key of the batch plus the trace write), reconcile time, and the trace
 * write units per reconcile as DynamoDB would bill them, the expectations table's requests per reconcile — each batch's entries packed exactly as
 * shared/state/dynamodb-traces.ts writes them, sized by its `packedItemWrus`. The cost model
 * (report.ts) takes the batch-10 figures as its inputs.
 *
 * N = BENCH_BATCH_VMIS (default 200; 100 with BENCH_QUICK), ROUNDS = BENCH_BATCH_ROUNDS (default 2; 1 quick). Never a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalRuntime } from '../../local/runtime.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import { packedItemWrus, packTraceEntries } from '../../shared/state/dynamodb-traces.ts';
import { startCluster } from './support/cluster.ts';
import { countInPlace } from './support/systems.ts';
import { CONTROLLER_IDENTITY, createVmis, USER_IDENTITY, vmiNames, VmiTracker, waitUntil } from './support/vmi-run.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = Number(process.env.BENCH_BATCH_VMIS ?? (QUICK ? 100 : 200));
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? (QUICK ? 1 : 2));
const SIZES = [1, 10] as const;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

interface RoundFigures {
  invocations: number;
  invocationMsTotal: number;
  invocationP99Ms: number;
  keys: number;
  reconcileMsTotal: number;
  traceWrus: number;
  traceEntries: number;
  /** Expectations table requests (traces apart). */
  tableReads: number;
  tableWrites: number;
  secondsToAllRunning: number;
  allRunning: boolean;
}

async function oneRound(batchSize: number, index: number): Promise<RoundFigures> {
  const cluster = await startCluster({ vmis: N, identities: [CONTROLLER_IDENTITY, USER_IDENTITY] });
  const tracker = new VmiTracker(cluster);
  const dir = mkdtempSync(join(tmpdir(), 'bench-batching-'));
  const rt = new LocalRuntime({ kubeConfig: cluster.kubeConfig(CONTROLLER_IDENTITY), dbPath: join(dir, 'queue.db'), log: silentLogger, batchSize });
  const wrus = { traceWrus: 0, traceEntries: 0 };
  const real = rt.state.traces.recordBatch.bind(rt.state.traces);
  (rt.state.traces as { recordBatch: typeof real }).recordBatch = async (entries, now) => {
    // What DynamoDB would bill this invocation's write (the SQLite write itself is what runs).
    for (const item of packTraceEntries(entries, now)) wrus.traceWrus += packedItemWrus(item);
    wrus.traceEntries += entries.length;
    await real(entries, now);
  };
  const table = { reads: 0, writes: 0 };
  countInPlace(rt.state.expectations, table);
  rt.start();
  try {
    while (!rt.relay.ready) await new Promise((r) => setTimeout(r, 50));
    const t0 = cluster.nowMs();
    await createVmis(cluster, tracker, vmiNames(`bt${index}`, N), { concurrency: 25 });
    const allRunning = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, 240_000);
    const lastRunning = Math.max(...[...tracker.vmis.values()].map((m) => m.runningAt ?? 0));
    await new Promise((r) => setTimeout(r, 1000));
    return {
      invocations: rt.metrics.total('invocation_duration_seconds'),
      invocationMsTotal: rt.metrics.sum('invocation_duration_seconds') * 1000,
      invocationP99Ms: (rt.metrics.quantile('invocation_duration_seconds', 0.99) ?? 0) * 1000,
      keys: rt.metrics.sum('invocation_keys'),
      reconcileMsTotal: rt.metrics.sum('reconcile_time_seconds') * 1000,
      ...wrus,
      tableReads: table.reads,
      tableWrites: table.writes,
      secondsToAllRunning: (lastRunning - t0) / 1000,
      allRunning,
    };
  } finally {
    await rt.stop();
    tracker.stop();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const by = new Map<number, RoundFigures[]>(SIZES.map((s) => [s, []]));
  for (let i = 0; i < ROUNDS; i++) {
    for (const size of i % 2 === 0 ? SIZES : [...SIZES].reverse()) {
      const f = await oneRound(size, i * SIZES.length + SIZES.indexOf(size));
      by.get(size)!.push(f);
      process.stdout.write(`  round ${i + 1} batch ${size}: ${f.invocations} invocations, ${round(f.keys / Math.max(1, f.invocations), 2)} keys each, ${round(f.invocationMsTotal / Math.max(1, f.invocations), 1)} ms avg, ${round(f.traceWrus / Math.max(1, f.traceEntries), 3)} trace WRU per reconcile, ${round(f.tableReads / Math.max(1, f.keys), 2)} table reads and ${round(f.tableWrites / Math.max(1, f.keys), 2)} writes per reconcile, all Running in ${round(f.secondsToAllRunning, 1)} s\n`);
    }
  }
  const sum = (rs: RoundFigures[], k: keyof RoundFigures) => rs.reduce((n, r) => n + Number(r[k]), 0);
  const figures = (rs: RoundFigures[]) => ({
    invocations: sum(rs, 'invocations'),
    keysPerInvocation: round(sum(rs, 'keys') / Math.max(1, sum(rs, 'invocations')), 2),
    invocationAvgMs: round(sum(rs, 'invocationMsTotal') / Math.max(1, sum(rs, 'invocations')), 1),
    invocationP99Ms: round(Math.max(...rs.map((r) => r.invocationP99Ms)), 1),
    reconcileAvgMs: round(sum(rs, 'reconcileMsTotal') / Math.max(1, sum(rs, 'keys')), 1),
    traceWrusPerReconcile: round(sum(rs, 'traceWrus') / Math.max(1, sum(rs, 'traceEntries')), 3),
    tableReadsPerReconcile: round(sum(rs, 'tableReads') / Math.max(1, sum(rs, 'keys')), 3),
    tableWritesPerReconcile: round(sum(rs, 'tableWrites') / Math.max(1, sum(rs, 'keys')), 3),
    secondsToAllRunning: round(sum(rs, 'secondsToAllRunning') / rs.length, 2),
    allRunning: rs.every((r) => r.allRunning),
  });
  return { vmis: N, rounds: ROUNDS, batch1: figures(by.get(1)!), batch10: figures(by.get(10)!) };
}
