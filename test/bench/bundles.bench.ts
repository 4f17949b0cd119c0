/**
 * Per function: minified bundle size (`npm run build` → dist/manifest.json) and cold import time
 * on this Node, plus what the VMI bundle is made of (esbuild metafile, bytes by package).
 * Targets: ≤ 1 MB, ≤ 150 ms. Never a test.
 *
 * Cold import = `await import(<bundle>)` timed inside a fresh `node` process; N processes per
 * bundle, reported as median and p90. The machine is shared and noisy, so every run also imports
 * an empty module, interleaved with the bundles (round i starts one process per bundle, in turn):
 * its process wall time is what starting Node costs right now, and `importVsNodeStart` (bundle
 * import median / empty-module process median) is the figure to compare across runs on a loaded
 * machine. The 1-minute load average is recorded before and after.
 *
 * Standalone, e.g. to compare a build with the current one in the same run (interleaved):
 *   node test/bench/bundles.bench.ts [--runs=9] [--no-build] [--dist=dist] [--compare=/tmp/a,/tmp/b] [--json]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ENTRIES, bundleOptions } from '../../scripts/build.ts';
import { percentile } from './support/stats.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 9);

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

/**
 * What the relay needs to get past its start-up checks (it starts on import): a kubeconfig whose
 * API server does not answer (its watches just retry) and listeners on free ports. The relay's
 * import is timed like a Lambda's; the process is then ended.
 */
function relayEnv(dir: string): Record<string, string> {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:9', 'insecure-skip-tls-verify': true } }], users: [{ name: 'u', user: { token: 'bench' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
  return { KUBECONFIG: kubeconfig, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0' };
}

/** The bundles measured like the Lambdas although they start working on import, with the env each needs. */
const STARTS_ON_IMPORT = new Set(['relay']);

/** One fresh process importing `file`: the import's own time, and the whole process's wall time, ms. */
function importOnce(file: string, extraEnv: Record<string, string> = {}): { importMs: number; wallMs: number } {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t)); process.exit(0);`;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    // What a Lambda container has: a region and credentials in the environment (never used here).
    env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', NODE_OPTIONS: '', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`import of ${file} failed: ${r.stderr.toString().split('\n').find((l) => l.trim() !== '') ?? `exit ${r.status}`}`);
  return { importMs: Number(r.stdout.toString().trim()), wallMs };
}

/** The nearest-rank median, to 0.1 ms, as the other percentiles of these figures. */
const median = (values: readonly number[]) => percentile(values, 0.5);

/** Cold import figures of one bundle (or of the empty module). */
export interface ImportFigures {
  readonly coldImportMedianMs: number;
  readonly coldImportP90Ms: number;
  readonly coldImportRuns: number[];
  /** Whole `node` process (start + import + exit), median. */
  readonly processMedianMs: number;
  /** Import median / the empty module's process median in the same run. */
  readonly importVsNodeStart?: number;
}

/**
 * Imports every file `runs` times, each in a fresh process, interleaved round by round with an
 * empty module (the baseline), so load that comes and goes hits all of them alike.
 */
export function measureColdImports(files: Readonly<Record<string, string>>, runs: number): { baseline: ImportFigures; bundles: Record<string, ImportFigures>; loadAvg1m: [number, number] } {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-empty-'));
  const empty = join(tmp, 'empty.mjs');
  writeFileSync(empty, 'export {};\n');
  const load0 = loadavg()[0]!;
  const samples = new Map<string, { importMs: number; wallMs: number }[]>([['(empty)', []], ...Object.keys(files).map((k) => [k, []] as [string, never[]])]);
  const startEnv = relayEnv(tmp);
  const envOf = (name: string) => (STARTS_ON_IMPORT.has(name.slice(name.indexOf(':') + 1)) ? startEnv : {});
  try {
    importOnce(empty); // warm the page cache for node itself
    for (let i = 0; i < runs; i++) {
      samples.get('(empty)')!.push(importOnce(empty));
      for (const [name, file] of Object.entries(files)) samples.get(name)!.push(importOnce(file, envOf(name)));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const figures = (s: { importMs: number; wallMs: number }[]): ImportFigures => ({
    coldImportMedianMs: median(s.map((x) => x.importMs)),
    coldImportP90Ms: percentile(s.map((x) => x.importMs), 0.9),
    coldImportRuns: s.map((x) => Math.round(x.importMs)),
    processMedianMs: median(s.map((x) => x.wallMs)),
  });
  const baseline = figures(samples.get('(empty)')!);
  const bundles = Object.fromEntries(
    Object.keys(files).map((name) => {
      const f = figures(samples.get(name)!);
      return [name, { ...f, importVsNodeStart: Math.round((f.coldImportMedianMs / baseline.processMedianMs) * 100) / 100 }];
    }),
  );
  return { baseline, bundles, loadAvg1m: [Math.round(load0 * 100) / 100, Math.round(loadavg()[0]! * 100) / 100] };
}

/** Bytes in the VMI bundle by top-level package (or by project folder), built as `npm run build` builds it. */
async function composition(name: string): Promise<Record<string, number>> {
  const entry = ENTRIES.find((e) => e.name === name)!;
  const r = await build({ ...bundleOptions(entry, ROOT), outfile: 'out.mjs', write: false, metafile: true, sourcemap: false });
  const byPackage = new Map<string, number>();
  for (const out of Object.values(r.metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(out.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const name = m ? m[1]! : path.split('/').slice(0, 2).join('/');
      byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
    }
  }
  return Object.fromEntries([...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([k, v]) => [k, Math.round(v / 1024)]));
}

interface Manifest {
  bundles: Record<string, { file: string; bytes: number }>;
}

/** The Lambda bundles and the relay's listed in `<dist>/manifest.json`: name → file. The CLI is left out. */
function lambdaBundles(dist: string, label = ''): { files: Record<string, string>; bytes: Record<string, number> } {
  const manifest = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8')) as Manifest;
  const lambdas = Object.entries(manifest.bundles).filter(([name]) => ENTRIES.find((e) => e.name === name)?.lambda === true || STARTS_ON_IMPORT.has(name));
  return {
    files: Object.fromEntries(lambdas.map(([name, b]) => [label + name, join(dist, b.file)])),
    bytes: Object.fromEntries(lambdas.map(([name, b]) => [label + name, b.bytes])),
  };
}

export interface RunOptions {
  /** Fresh processes per bundle; default `BENCH_IMPORT_RUNS` or 9. */
  readonly runs?: number;
  /** Run `npm run build` first; default true. */
  readonly build?: boolean;
  /** Where the bundles are; default `<root>/dist`. */
  readonly dist?: string;
  /** Other dist folders (each with its manifest.json) measured in the same rounds, names prefixed `<folder name>:`. */
  readonly compare?: readonly string[];
}

export async function run(opts: RunOptions = {}): Promise<Record<string, unknown>> {
  const runs = opts.runs ?? RUNS;
  // `npm run bench` passes no options: another build to compare in the same rounds comes from the env.
  opts = { ...opts, ...(opts.compare === undefined && process.env.BENCH_BUNDLES_COMPARE ? { compare: process.env.BENCH_BUNDLES_COMPARE.split(',') } : {}) };
  const dist = resolve(opts.dist ?? join(ROOT, 'dist'));
  if (opts.build ?? true) {
    say('npm run build …');
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const all = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8')) as Manifest;
  const current = lambdaBundles(dist);
  const others = (opts.compare ?? []).map((dir) => lambdaBundles(resolve(dir), `${basename(resolve(dir))}:`));
  const other = { files: Object.assign({}, ...others.map((o) => o.files)) as Record<string, string>, bytes: Object.assign({}, ...others.map((o) => o.bytes)) as Record<string, number> };
  say(`load average (1 min) ${loadavg()[0]!.toFixed(2)}; ${runs} fresh processes per bundle, interleaved with an empty module`);
  const m = measureColdImports({ ...current.files, ...other.files }, runs);
  const functions: Record<string, { bytes: number; kib: number } & Partial<ImportFigures>> = {};
  for (const [name, b] of Object.entries({ ...all.bundles, ...Object.fromEntries(Object.entries(other.bytes).map(([n, bytes]) => [n, { file: '', bytes }])) })) {
    functions[name] = { bytes: b.bytes, kib: Math.round(b.bytes / 1024), ...m.bundles[name] };
    const f = functions[name];
    say(`${name.padEnd(28)} ${String(f.kib).padStart(5)} KiB${f.coldImportMedianMs !== undefined ? `  cold import median ${f.coldImportMedianMs} ms, p90 ${f.coldImportP90Ms} ms, ${f.importVsNodeStart}× node start` : ''}`);
  }
  say(`${'(empty module)'.padEnd(28)}            import median ${m.baseline.coldImportMedianMs} ms; node start+exit median ${m.baseline.processMedianMs} ms, p90 of import ${m.baseline.coldImportP90Ms} ms`);
  say(`load average (1 min) before/after: ${m.loadAvg1m.join(' / ')}`);
  return { node: process.version, runs, loadAvg1m: m.loadAvg1m, emptyModule: m.baseline, functions, vmiBundleKiBByPackage: await composition('vmi') };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const arg = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const runs = arg('runs');
  const dist = arg('dist');
  const compare = arg('compare');
  const r = await run({
    build: !args.includes('--no-build'),
    ...(runs !== undefined ? { runs: Number(runs) } : {}),
    ...(dist !== undefined ? { dist } : {}),
    ...(compare !== undefined ? { compare: compare.split(',') } : {}),
  });
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
