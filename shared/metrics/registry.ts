/**
 * A small Prometheus-style metrics registry: counters, gauges and histograms with labels,
 * rendered in the text exposition format for `/metrics`, and readable as plain numbers for the
 * local dashboard, the CLI and the Lambda EMF writer. Metric names follow client-go /
 * controller-runtime (docs/architecture.md §6.12): `workqueue_depth`, `reconcile_total{result}`, …
 */

import { ExpositionWriter, type MetricsCollector } from './exposition.ts';

type Labels = Readonly<Record<string, string>>;

interface Series {
  labels: Labels;
  value: number;
  /** histograms only */
  buckets?: number[];
  /** histograms only: raw observations since the last drain (capped), for EMF. */
  samples?: number[];
  sum?: number;
  count?: number;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  bucketBounds?: readonly number[];
  series: Map<string, Series>;
}

/** Raw observations kept per histogram series between drains (EMF takes up to 100 values). */
const MAX_SAMPLES = 100;

/** A drained series: histograms carry their raw observations. */
export interface DrainedSeries {
  readonly name: string;
  readonly labels: Labels;
  readonly values: readonly number[];
  readonly unit: 'Count' | 'Seconds' | 'None';
}

/** Default latency buckets, seconds (controller-runtime's reconcile_time_seconds uses similar). */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function labelKey(labels: Labels): string {
  return Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`).join(',');
}

function escape(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function renderLabels(labels: Labels, extra?: [string, string]): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
  if (extra) parts.push(`${extra[0]}="${escape(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

export class MetricsRegistry {
  readonly #families = new Map<string, Family>();
  readonly #collectors: MetricsCollector[] = [];

  /**
   * Adds a collector whose families are written after the registry's own at every render (the
   * relay's KubeVirt collectors). Collectors never reach {@link drain}: they serve scrapes only.
   * Returns its remover.
   */
  addCollector(c: MetricsCollector): () => void {
    this.#collectors.push(c);
    return () => {
      const i = this.#collectors.indexOf(c);
      if (i >= 0) this.#collectors.splice(i, 1);
    };
  }

  /** Whether a family of this name has been written to (not counting collectors). */
  has(name: string): boolean {
    return this.#families.has(name);
  }

  #family(name: string, help: string, type: Family['type'], bucketBounds?: readonly number[]): Family {
    let f = this.#families.get(name);
    if (!f) {
      f = { name, help, type, series: new Map(), ...(bucketBounds ? { bucketBounds } : {}) };
      this.#families.set(name, f);
    }
    return f;
  }

  #series(f: Family, labels: Labels): Series {
    const k = labelKey(labels);
    let s = f.series.get(k);
    if (!s) {
      s = { labels: { ...labels }, value: 0 };
      if (f.type === 'histogram') Object.assign(s, { buckets: (f.bucketBounds ?? DEFAULT_BUCKETS).map(() => 0), sum: 0, count: 0 });
      f.series.set(k, s);
    }
    return s;
  }

  /** Adds `by` (default 1) to a counter. */
  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    this.#series(this.#family(name, help, 'counter'), labels).value += by;
  }

  set(name: string, help: string, labels: Labels, value: number): void {
    this.#series(this.#family(name, help, 'gauge'), labels).value = value;
  }

  observe(name: string, help: string, labels: Labels, value: number, buckets: readonly number[] = DEFAULT_BUCKETS): void {
    const f = this.#family(name, help, 'histogram', buckets);
    const s = this.#series(f, labels);
    const bounds = f.bucketBounds ?? DEFAULT_BUCKETS;
    for (let i = 0; i < bounds.length; i++) if (value <= bounds[i]!) s.buckets![i]! += 1;
    s.sum! += value;
    s.count! += 1;
    if ((s.samples ??= []).length < MAX_SAMPLES) s.samples.push(value);
  }

  /** Current value of a counter/gauge series (0 when absent); a histogram's count. */
  value(name: string, labels: Labels = {}): number {
    const s = this.#families.get(name)?.series.get(labelKey(labels));
    return s ? (s.count ?? s.value) : 0;
  }

  /** Sum over every series of a family, optionally filtered by some labels. */
  total(name: string, filter: Labels = {}): number {
    const f = this.#families.get(name);
    if (!f) return 0;
    let sum = 0;
    for (const s of f.series.values()) {
      if (Object.entries(filter).every(([k, v]) => s.labels[k] === v)) sum += s.count ?? s.value;
    }
    return sum;
  }

  /** Sum of a histogram's observations over its series, optionally filtered by some labels. */
  sum(name: string, filter: Labels = {}): number {
    const f = this.#families.get(name);
    if (!f || f.type !== 'histogram') return 0;
    let total = 0;
    for (const s of f.series.values()) if (Object.entries(filter).every(([k, v]) => s.labels[k] === v)) total += s.sum!;
    return total;
  }

  /** Every series of a family with its labels and value (a histogram's count). */
  series(name: string): { labels: Labels; value: number }[] {
    const f = this.#families.get(name);
    return f ? [...f.series.values()].map((s) => ({ labels: s.labels, value: s.count ?? s.value })) : [];
  }

  /** Histogram quantile estimate (upper bucket bound), seconds; undefined with no samples. */
  quantile(name: string, q: number, filter: Labels = {}): number | undefined {
    const f = this.#families.get(name);
    if (!f || f.type !== 'histogram') return undefined;
    const bounds = f.bucketBounds ?? DEFAULT_BUCKETS;
    const merged = bounds.map(() => 0);
    let count = 0;
    for (const s of f.series.values()) {
      if (!Object.entries(filter).every(([k, v]) => s.labels[k] === v)) continue;
      s.buckets!.forEach((b, i) => (merged[i]! += b));
      count += s.count!;
    }
    if (count === 0) return undefined;
    const target = q * count;
    for (let i = 0; i < bounds.length; i++) if (merged[i]! >= target) return bounds[i];
    return Infinity;
  }

  /**
   * Every series since the last drain, then clears the registry: what a Lambda invocation
   * publishes as CloudWatch EMF. Counters and gauges give their value; histograms give their raw
   * observations (so CloudWatch can compute p50/p99 itself).
   */
  drain(): DrainedSeries[] {
    const out: DrainedSeries[] = [];
    for (const f of this.#families.values()) {
      for (const s of f.series.values()) {
        if (f.type === 'histogram') {
          if (s.samples?.length) out.push({ name: f.name, labels: s.labels, values: s.samples, unit: f.name.endsWith('_seconds') ? 'Seconds' : 'Count' });
        } else {
          out.push({ name: f.name, labels: s.labels, values: [s.value], unit: f.type === 'counter' ? 'Count' : 'None' });
        }
      }
    }
    this.#families.clear();
    return out;
  }

  /** The Prometheus text exposition format. */
  render(): string {
    const out: string[] = [];
    for (const f of this.#families.values()) {
      out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
      for (const s of f.series.values()) {
        if (f.type !== 'histogram') {
          out.push(`${f.name}${renderLabels(s.labels)} ${s.value}`);
          continue;
        }
        const bounds = f.bucketBounds ?? DEFAULT_BUCKETS;
        bounds.forEach((b, i) => out.push(`${f.name}_bucket${renderLabels(s.labels, ['le', String(b)])} ${s.buckets![i]}`));
        out.push(`${f.name}_bucket${renderLabels(s.labels, ['le', '+Inf'])} ${s.count}`);
        out.push(`${f.name}_sum${renderLabels(s.labels)} ${s.sum}`, `${f.name}_count${renderLabels(s.labels)} ${s.count}`);
      }
    }
    const own = out.length ? out.join('\n') + '\n' : '';
    if (this.#collectors.length === 0) return own || '\n';
    const w = new ExpositionWriter();
    w.raw(own);
    for (const c of this.#collectors) c.collect(w);
    return w.text();
  }
}
