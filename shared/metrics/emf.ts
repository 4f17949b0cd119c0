/**
 * CloudWatch Embedded Metric Format: one JSON line on stdout per metric series, which Lambda's
 * log pipeline turns into CloudWatch metrics (no API calls, no extra latency). Dimensions are the
 * series' labels, so `reconcile_total{controller,result}` becomes a metric with those dimensions;
 * a histogram's raw observations go out as one value array, so CloudWatch's p99 is real.
 */
import type { MetricsRegistry } from './registry.ts';
import { VMI_SYNC } from './kubevirt/catalog.ts';

/**
 * Series kept out of EMF: one per VMI (`kubevirt_vmi_sync_total{namespace,name}`) would be one
 * CloudWatch metric per VMI, billed each month; Prometheus scrapes of the local runtime carry it.
 */
export const NOT_PUBLISHED_AS_EMF: ReadonlySet<string> = new Set([VMI_SYNC.total.name]);

export function publishEmf(registry: MetricsRegistry, namespace: string, write: (line: string) => void = (l) => process.stdout.write(l + '\n'), now: () => number = Date.now): number {
  const series = registry.drain().filter((s) => !NOT_PUBLISHED_AS_EMF.has(s.name));
  for (const s of series) {
    const dims = Object.keys(s.labels);
    write(
      JSON.stringify({
        _aws: { Timestamp: now(), CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [dims], Metrics: [{ Name: s.name, Unit: s.unit }] }] },
        ...s.labels,
        [s.name]: s.values.length === 1 ? s.values[0] : s.values,
      }),
    );
  }
  return series.length;
}
