/**
 * The scale run (issue 17, goal 4): BENCH_SCALE_VMIS VMIs (default 10,000; 1,000 with
 * BENCH_QUICK=1; 0 skips it) created at once through the serverless path — relay → queue →
 * functions (`LocalRuntime`) — on a fresh sandbox in a child process, until every one is Running.
 * Beside it, its anchors: KubeVirt's KWOK scale lane creates 8,000 VMIs within a 15-minute limit,
 * and virt-controller holds about 173 KB per VMI; this run reports the time to all Scheduled and
 * all Running, the burst rate and API call p50 (flatness against the e2e burst at 300), the
 * resident memory the run added per VMI in the system's process and in the cluster's, and the
 * relay's memory per watched object (relay-memory.bench.ts measures it alone). Never a test.
 */
import { burstRun, say } from './support/e2e-runs.ts';

const N = Number(process.env.BENCH_SCALE_VMIS ?? (process.env.BENCH_QUICK === '1' ? 1000 : 10_000));

/** KubeVirt's anchors (docs/benchmarks.md cites them). */
export const ANCHORS = {
  kwokVmis: 8000,
  kwokLimitSeconds: 15 * 60,
  virtControllerKbPerVmi: 173,
} as const;

export async function run(): Promise<Record<string, unknown>> {
  if (N <= 0) return { skipped: 'BENCH_SCALE_VMIS=0' };
  // Long enough for a slow machine: the anchor's own 15 minutes, twice.
  const figures = await burstRun('serverless', N, 'emulator', { untilRunning: true, timeoutMs: 2 * ANCHORS.kwokLimitSeconds * 1000 });
  const running = figures.running as { secondsToAllRunning?: number } | undefined;
  say(`scale: ${N} VMIs Running in ${running?.secondsToAllRunning ?? '?'} s (KubeVirt's KWOK lane: ${ANCHORS.kwokVmis} within ${ANCHORS.kwokLimitSeconds} s)`);
  const scrape = (running as { scrape?: { msMedian: number; bytes: number; series: number } } | undefined)?.scrape;
  if (scrape) say(`scale: one /metrics scrape at ${N} VMIs: ${scrape.msMedian} ms, ${scrape.bytes} bytes, ${scrape.series} series`);
  return { vmis: N, anchors: ANCHORS, serverless: figures };
}
