/**
 * Writing one of KubeVirt's metrics ({@link KubevirtMetric}) into a MetricsRegistry: the name,
 * help, type and buckets come from the catalog, so a caller names only the label values.
 */
import type { MetricsRegistry } from '../registry.ts';
import type { KubevirtMetric } from './catalog.ts';

/** Label values by name; every label of the metric should be given (a missing one is written empty). */
export type LabelValues = Readonly<Record<string, string>>;

function labelsOf(def: KubevirtMetric, values: LabelValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of def.labels) out[l] = values[l] ?? '';
  return out;
}

/** Sets a gauge series. */
export function setMetric(reg: Pick<MetricsRegistry, 'set'>, def: KubevirtMetric, values: LabelValues, value: number): void {
  reg.set(def.name, def.help, labelsOf(def, values), value);
}

/** Adds to a counter series. */
export function addMetric(reg: Pick<MetricsRegistry, 'inc'>, def: KubevirtMetric, values: LabelValues, by = 1): void {
  reg.inc(def.name, def.help, labelsOf(def, values), by);
}

/** Observes one value of a histogram series, with the metric's own buckets. */
export function observeMetric(reg: Pick<MetricsRegistry, 'observe'>, def: KubevirtMetric, values: LabelValues, value: number): void {
  reg.observe(def.name, def.help, labelsOf(def, values), value, def.buckets);
}
