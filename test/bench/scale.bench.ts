/**
 * The scale run (issue 17, goal 4): BENCH_SCALE_VMIS VMIs (default 10,000; 1,000 with
 * BENCH_QUICK=1; 0 skips it) created at once through the serverless path — relay → queue →
 * functions (`LocalRuntime`) — on a fresh sandbox in a child process, until every one is Running.
 * Beside it, its anchors: KubeVirt's KWOK scale lane creates 8,000 VMIs within a 15-minute limit,
 * and virt-controller holds about 173 KB per VMI; this run reports the time to all Scheduled and
 * all Running, the burst rate and API call p50, the resident memory the run added per VMI in the
 * system's process and in the cluster's, and the relay's memory per watched object
 * (relay-memory.bench.ts measures it alone). Never a test.
 *
 * Flatness in N is measured side by side: right before the big burst, the same path takes a burst
 * of BENCH_SCALE_REFERENCE_VMIS (default 300, the e2e burst's size; 0 leaves the ratios to the
 * e2e run's burst at 300) on its own fresh sandbox, and the rate and API call p50 of the two are
 * compared. Against the e2e run's figure instead, the ratio also held whatever the machine did
 * between the two runs (an hour apart, on a shared machine: a third slower or faster).
 */
import { burstRun, say } from './support/e2e-runs.ts';

const N = Number(process.env.BENCH_SCALE_VMIS ?? (process.env.BENCH_QUICK === '1' ? 1000 : 10_000));
const REFERENCE = Number(process.env.BENCH_SCALE_REFERENCE_VMIS ?? 300);

/** KubeVirt's anchors (docs/benchmarks.md cites them). */
export const ANCHORS = {
  kwokVmis: 8000,
  kwokLimitSeconds: 15 * 60,
  virtControllerKbPerVmi: 173,
} as const;

export async function run(): Promise<Record<string, unknown>> {
  if (N <= 0) return { skipped: 'BENCH_SCALE_VMIS=0' };
  const reference = REFERENCE > 0 && REFERENCE < N ? await burstRun('serverless', REFERENCE, 'emulator') : undefined;
  // Long enough for a slow machine: the anchor's own 15 minutes, twice.
  const figures = await burstRun('serverless', N, 'emulator', { untilRunning: true, timeoutMs: 2 * ANCHORS.kwokLimitSeconds * 1000 });
  const running = figures.running as { secondsToAllRunning?: number } | undefined;
  say(`scale: ${N} VMIs Running in ${running?.secondsToAllRunning ?? '?'} s (KubeVirt's KWOK lane: ${ANCHORS.kwokVmis} within ${ANCHORS.kwokLimitSeconds} s)`);
  const scrape = (running as { scrape?: { msMedian: number; bytes: number; series: number } } | undefined)?.scrape;
  if (scrape) say(`scale: one /metrics scrape at ${N} VMIs: ${scrape.msMedian} ms, ${scrape.bytes} bytes, ${scrape.series} series`);
  const flatness = reference ? flatnessOf(figures, reference) : undefined;
  if (flatness) say(`scale: at ${N} / at ${REFERENCE} VMIs, same run: VMIs/s ${flatness.vmisPerSecondRatio}×, API call p50 ${flatness.apiCallP50Ratio}×`);
  return { vmis: N, anchors: ANCHORS, serverless: figures, ...(reference ? { reference: { vmis: REFERENCE, serverless: reference }, flatness } : {}) };
}

/** The big burst's rate and API call p50 over the reference burst's. */
function flatnessOf(big: Record<string, unknown>, small: Record<string, unknown>): { vmisPerSecondRatio?: number; apiCallP50Ratio?: number } {
  const rate = (f: Record<string, unknown>) => f.vmisPerSecondScheduled as number | undefined;
  const p50 = (f: Record<string, unknown>) => (f.breakdown as { apiCallP50Ms?: number } | undefined)?.apiCallP50Ms;
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? Math.round((a / b) * 100) / 100 : undefined);
  return { vmisPerSecondRatio: ratio(rate(big), rate(small)), apiCallP50Ratio: ratio(p50(big), p50(small)) };
}
