/**
 * The pieces docs/benchmarks.md is written with (report.ts, report-kubevirt.ts): reading a figure
 * out of the nested results, a summary row next to its target, a Markdown table. Pure.
 */

export type Json = Record<string, unknown>;

/** Reads a nested value by path ('a.b.c'), undefined when absent. */
export function at(o: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Json)[k] : undefined), o);
}
/** A number stored under `key` of the object at `path` (keys may contain dots). */
export const numIn = (o: unknown, path: string, key: string): number | undefined => {
  const v = (at(o, path) as Json | undefined)?.[key];
  return typeof v === 'number' ? v : undefined;
};
export const num = (o: unknown, path: string): number | undefined => {
  const v = at(o, path);
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

export interface Row {
  figure: string;
  measured: string;
  target: string;
  met: boolean | undefined;
}

export function row(figure: string, value: number | undefined, unit: string, target: string, ok: (v: number) => boolean): Row {
  return { figure, measured: value === undefined ? 'not run' : `${value}${unit}`, target, met: value === undefined ? undefined : ok(value) };
}

/** A figure reported for information, with no target of its own. */
export function info(figure: string, value: number | undefined, unit: string, note: string): Row {
  return { figure, measured: value === undefined ? 'not run' : `${value}${unit}`, target: note, met: undefined };
}

export function table(headers: string[], rows: (string | number | undefined)[][]): string {
  const cell = (v: string | number | undefined) => (v === undefined ? '–' : String(v));
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

