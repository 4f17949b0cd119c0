/**
 * Reading a Prometheus text exposition back (families, types, samples with labels) and KubeVirt's
 * metric list (test/fixtures/kubevirt-metrics/virt-controller-metrics.json, read from KubeVirt's
 * source at the commit it names), for the tests that hold our exposition to KubeVirt's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../support/reference.ts';

export interface FixtureMetric {
  readonly name: string;
  readonly type: 'gauge' | 'counter' | 'histogram';
  readonly labels: readonly string[];
  readonly help: string;
  readonly source: string;
}

export const KUBEVIRT_FIXTURE = JSON.parse(readFileSync(join(projectRoot, 'test/fixtures/kubevirt-metrics/virt-controller-metrics.json'), 'utf8')) as {
  readonly kubevirtCommit: string;
  readonly metrics: readonly FixtureMetric[];
};

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Parsed {
  readonly types: ReadonlyMap<string, string>;
  readonly helps: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

function unescape(v: string): string {
  return v.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** Parses the text format (enough of it for our own output: no timestamps, no exemplars). */
export function parseExposition(text: string): Parsed {
  const types = new Map<string, string>();
  const helps = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      (meta[1] === 'TYPE' ? types : helps).set(meta[2]!, meta[3]!);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = unescape(l[2]!);
    samples.push({ name: m[1]!, labels, value: Number(m[3] === '+Inf' ? Infinity : m[3]) });
  }
  return { types, helps, samples };
}

/** The samples of one family (a histogram's `_bucket`, `_sum` and `_count` included). */
export function samplesOf(p: Parsed, family: string): Sample[] {
  return p.samples.filter((s) => s.name === family || s.name === `${family}_bucket` || s.name === `${family}_sum` || s.name === `${family}_count`);
}

/** What is wrong with our exposition of `m` (empty when it matches KubeVirt's). */
export function mismatches(p: Parsed, m: FixtureMetric): string[] {
  const out: string[] = [];
  const type = p.types.get(m.name);
  if (type === undefined) return [`${m.name}: not exposed`];
  if (type !== m.type) out.push(`${m.name}: type ${type}, KubeVirt's is ${m.type}`);
  if (p.helps.get(m.name) !== m.help) out.push(`${m.name}: help '${p.helps.get(m.name)}', KubeVirt's is '${m.help}'`);
  const series = samplesOf(p, m.name).filter((s) => !s.name.endsWith('_bucket'));
  if (series.length === 0) out.push(`${m.name}: no series`);
  const want = [...m.labels].sort().join(',');
  for (const s of series) {
    // kubevirt_vm_labels adds one `label_<key>` per VM label beside its fixed ones.
    const got = Object.keys(s.labels).filter((k) => !(m.name === 'kubevirt_vm_labels' && k.startsWith('label_'))).sort().join(',');
    if (got !== want) out.push(`${m.name}: series labelled {${got}}, KubeVirt's labels are {${want}}`);
  }
  return [...new Set(out)];
}

/** Debian's promtool, when installed (CI installs the `prometheus` package). */
export const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));
export const NO_PROMTOOL = 'skipped: promtool is not installed (apt-get install prometheus; .ci/run installs it)';

/**
 * KubeVirt's own names promtool's linter flags: its status-timestamp counters do not end in
 * `_total`. Ours must lint clean otherwise.
 */
export const KUBEVIRT_LINT_FINDINGS = new Set(
  KUBEVIRT_FIXTURE.metrics.filter((m) => m.type === 'counter' && !m.name.endsWith('_total')).map((m) => `${m.name} counter metrics should have "_total" suffix`),
);

/** `promtool check metrics` on `text`: its exit code and findings (one per line). */
export function promtoolCheckMetrics(text: string): { code: number; findings: string[] } {
  const r = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  const findings = `${r.stdout}${r.stderr}`.split('\n').map((l) => l.trim()).filter(Boolean);
  return { code: r.status ?? -1, findings };
}
