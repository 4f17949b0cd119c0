/**
 * What one Prometheus scrape of a runtime's /metrics costs: the time to render the registry (its
 * own families and the relay's KubeVirt collectors over every object it knows), and the bytes
 * and series served. Median of a few renders, each a whole scrape's work.
 */
import type { MetricsRegistry } from '../../../shared/metrics/registry.ts';

export interface ScrapeCost {
  /** Wall time of one render, the text made whole (as a server's write does). */
  readonly msMedian: number;
  readonly msRuns: readonly number[];
  /** CPU time (user + system) of the same renders, median: steadier on a shared machine. */
  readonly cpuMsMedian: number;
  readonly bytes: number;
  readonly series: number;
}

export function scrapeCost(registry: MetricsRegistry, runs = 5): ScrapeCost {
  const ms: number[] = [];
  const cpu: number[] = [];
  let text = '';
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    text = registry.render();
    bytes = Buffer.byteLength(text);
    const c = process.cpuUsage(c0);
    ms.push(Math.round((performance.now() - t0) * 10) / 10);
    cpu.push(Math.round((c.user + c.system) / 100) / 10);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  let series = 0;
  for (const line of text.split('\n')) if (line !== '' && !line.startsWith('#')) series++;
  return { msMedian: median(ms), msRuns: ms, cpuMsMedian: median(cpu), bytes, series };
}
