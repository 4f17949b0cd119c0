/**
 * What per-key trace recording (issue 18) costs, side by side in one run: the same burst of VMIs
 * on a fresh sandbox with the local runtime (file-backed SQLite, as `up` runs it) with the trace
 * store on, and with it off (its `record` a no-op), alternating off/on (then on/off) for ROUNDS rounds so a
 * loaded machine slows both alike.
 *
 * Figures: reconcile time per reconcile (all controllers) off vs on; the time spent recording
 * (measured around each `record` call, on) against the reconcile time it follows; trace table
 * writes per reconcile (one `record` = one write: an insert and its prune in one SQLite
 * transaction, one PutItem on DynamoDB) and an entry's size (DynamoDB bills 1 WRU per KB); and the wall time until every VMI is Running.
 *
 * N = BENCH_TRACE_VMIS (default 150; 100 with BENCH_QUICK=1), ROUNDS = BENCH_TRACE_ROUNDS (default 2; 1 quick). Never a test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalRuntime } from '../../local/runtime.ts';
import { silentLogger } from '../../shared/metrics/log.ts';
import type { TraceEntry, Traces } from '../../shared/state/traces.ts';
import { startCluster } from './support/cluster.ts';
import { CONTROLLER_IDENTITY, createVmis, USER_IDENTITY, vmiNames, VmiTracker, waitUntil } from './support/vmi-run.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const N = Number(process.env.BENCH_TRACE_VMIS ?? (QUICK ? 100 : 150));
const ROUNDS = Number(process.env.BENCH_TRACE_ROUNDS ?? (QUICK ? 1 : 2));

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

interface RoundFigures {
  reconciles: number;
  reconcileMsTotal: number;
  /** Table writes (a `record`, or a `recordBatch` of one invocation's entries). */
  records: number;
  entries: number;
  recordMsTotal: number;
  entryBytesTotal: number;
  secondsToAllRunning: number;
  allRunning: boolean;
}

/**
 * Replaces `record` and `recordBatch` on the store object the runtime hands its workers: timed
 * (on) or no-ops (off). The workers write one invocation's entries with one `recordBatch`.
 */
function hookRecord(traces: Traces, on: boolean, into: { records: number; entries: number; recordMsTotal: number; entryBytesTotal: number }): void {
  const write = async (entries: readonly TraceEntry[], now: number, real: () => Promise<void>) => {
    if (!on) return;
    const t0 = performance.now();
    try {
      await real();
    } finally {
      into.records++;
      into.entries += entries.length;
      into.recordMsTotal += performance.now() - t0;
    }
    // Outside the timing: the item's size is what DynamoDB bills a write by (1 WRU per KB).
    for (const entry of entries) into.entryBytesTotal += Buffer.byteLength(JSON.stringify(entry));
  };
  const record = traces.record.bind(traces);
  const recordBatch = traces.recordBatch.bind(traces);
  (traces as { record: Traces['record'] }).record = (entry, now) => write([entry], now, () => record(entry, now));
  (traces as { recordBatch: Traces['recordBatch'] }).recordBatch = (entries, now) => (entries.length === 0 ? Promise.resolve() : write(entries, now, () => recordBatch(entries, now)));
}

async function oneRound(on: boolean, index: number): Promise<RoundFigures> {
  const cluster = await startCluster({ vmis: N, identities: [CONTROLLER_IDENTITY, USER_IDENTITY] });
  const tracker = new VmiTracker(cluster);
  const dir = mkdtempSync(join(tmpdir(), 'bench-traces-'));
  const rt = new LocalRuntime({ kubeConfig: cluster.kubeConfig(CONTROLLER_IDENTITY), dbPath: join(dir, 'queue.db'), log: silentLogger });
  const rec = { records: 0, entries: 0, recordMsTotal: 0, entryBytesTotal: 0 };
  hookRecord(rt.state.traces, on, rec);
  rt.start();
  try {
    while (!rt.relay.ready) await new Promise((r) => setTimeout(r, 50));
    const t0 = cluster.nowMs();
    await createVmis(cluster, tracker, vmiNames(`tr${index}`, N), { concurrency: 25 });
    const allRunning = await waitUntil(() => tracker.count((m) => m.runningAt !== undefined) >= N, 180_000);
    const lastRunning = Math.max(...[...tracker.vmis.values()].map((m) => m.runningAt ?? 0));
    // Trailing status reconciles settle before counting.
    await new Promise((r) => setTimeout(r, 1000));
    return {
      reconciles: rt.metrics.total('reconcile_time_seconds'),
      reconcileMsTotal: rt.metrics.sum('reconcile_time_seconds') * 1000,
      ...rec,
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
  const sums = { off: [] as RoundFigures[], on: [] as RoundFigures[] };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first: the first run of a process also pays for warming up.
    for (const on of i % 2 === 0 ? [false, true] : [true, false]) {
      const f = await oneRound(on, i * 2 + (on ? 1 : 0));
      (on ? sums.on : sums.off).push(f);
      process.stdout.write(`  round ${i + 1} traces ${on ? 'on ' : 'off'}: ${f.reconciles} reconciles, ${round(f.reconcileMsTotal / f.reconciles, 1)} ms avg, record ${round(f.recordMsTotal / Math.max(1, f.records), 2)} ms avg, all Running in ${round(f.secondsToAllRunning, 1)} s\n`);
    }
  }
  const total = (rs: RoundFigures[], k: keyof RoundFigures) => rs.reduce((n, r) => n + Number(r[k]), 0);
  const avgReconcile = (rs: RoundFigures[]) => total(rs, 'reconcileMsTotal') / Math.max(1, total(rs, 'reconciles'));
  const offMs = avgReconcile(sums.off);
  const onMs = avgReconcile(sums.on);
  // Per reconcile: one invocation's entries share one write, so its time is spread over them.
  const recordMs = total(sums.on, 'recordMsTotal') / Math.max(1, total(sums.on, 'reconciles'));
  return {
    vmis: N,
    rounds: ROUNDS,
    allRunning: [...sums.off, ...sums.on].every((r) => r.allRunning),
    reconcileAvgMsOff: round(offMs, 2),
    reconcileAvgMsOn: round(onMs, 2),
    recordAvgMs: round(recordMs, 3),
    // The cost that matters: what recording adds after each reconcile, against the reconcile itself.
    recordCostPctOfReconcile: round((recordMs / onMs) * 100, 2),
    reconcileOnVsOffPct: round(((onMs - offMs) / offMs) * 100, 1),
    traceWritesPerReconcile: round(total(sums.on, 'records') / Math.max(1, total(sums.on, 'reconciles')), 3),
    traceEntryAvgBytes: Math.round(total(sums.on, 'entryBytesTotal') / Math.max(1, total(sums.on, 'entries'))),
    secondsToAllRunningOff: round(total(sums.off, 'secondsToAllRunning') / ROUNDS, 2),
    secondsToAllRunningOn: round(total(sums.on, 'secondsToAllRunning') / ROUNDS, 2),
  };
}
