/**
 * What one Prometheus scrape of a runtime's /metrics costs: the time to render the registry (its
 * own families and the relay's KubeVirt collectors over every object it knows), and the bytes
 * and series served. Median of a few renders, each a whole scrape's work.
 */
import type { MetricsRegistry } from '../../../shared/metrics/registry.ts';

export interface ScrapeCost {
  readonly msMedian: number;
  readonly msRuns: readonly number[];
  readonly bytes: number;
  readonly series: number;
}

export function scrapeCost(registry: MetricsRegistry, runs = 5): ScrapeCost {
  const ms: number[] = [];
  let text = '';
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    text = registry.render();
    ms.push(Math.round((performance.now() - t0) * 10) / 10);
  }
  const sorted = [...ms].sort((a, b) => a - b);
  let series = 0;
  for (const line of text.split('\n')) if (line !== '' && !line.startsWith('#')) series++;
  return { msMedian: sorted[Math.floor(sorted.length / 2)]!, msRuns: ms, bytes: Buffer.byteLength(text), series };
}
