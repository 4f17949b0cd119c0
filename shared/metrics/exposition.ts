/**
 * Writing the Prometheus text exposition format (version 0.0.4) directly, for collectors that
 * compute their series at scrape time from what they already hold (the relay's KubeVirt
 * collectors, docs/operations.md): no series objects are kept between scrapes, so a deleted VMI
 * leaves nothing behind and a scrape of 10,000 VMIs allocates only its text.
 */

/** A family's header: name, type and help. */
export interface FamilyHeader {
  readonly name: string;
  readonly type: 'gauge' | 'counter' | 'histogram';
  readonly help: string;
}

/** Something that writes families at scrape time (registered on a MetricsRegistry). */
export interface MetricsCollector {
  collect(out: ExpositionWriter): void;
}

/** A label value as the format wants it: backslash, double quote and newline escaped. */
export function escapeLabelValue(v: string): string {
  // Nearly every value needs nothing: one scan instead of three replaces (a scrape writes millions).
  if (!NEEDS_ESCAPE.test(v)) return v;
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

const NEEDS_ESCAPE = /[\\"\n]/;

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A number as the format spells it (`+Inf`, `-Inf`, `NaN`). */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** Accumulates exposition text; one writer per scrape. */
export class ExpositionWriter {
  // One growing string: V8 appends by reference and flattens once, at text(); an array of
  // 200,000 lines joined at the end allocated twice as much.
  #out = '';

  /** `# HELP` and `# TYPE` of one family; its samples follow. */
  family(f: FamilyHeader): void {
    this.#out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
  }

  /** One sample: `names[i]="values[i]"`, then any extra label pairs (already valid names). */
  sample(name: string, names: readonly string[], values: readonly string[], value: number, extra?: readonly (readonly [string, string])[]): void {
    let labels = '';
    for (let i = 0; i < names.length; i++) labels += `${i ? ',' : ''}${names[i]}="${escapeLabelValue(values[i] ?? '')}"`;
    if (extra) for (const [k, v] of extra) labels += `${labels ? ',' : ''}${k}="${escapeLabelValue(v)}"`;
    this.#out += labels ? `${name}{${labels}} ${formatValue(value)}\n` : `${name} ${formatValue(value)}\n`;
  }

  /** Raw, already formatted lines (a registry's own rendering). */
  raw(text: string): void {
    if (text) this.#out += text.endsWith('\n') ? text : text + '\n';
  }

  text(): string {
    return this.#out;
  }
}
