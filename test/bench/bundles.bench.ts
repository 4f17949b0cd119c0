/**
 * Per function: minified bundle size (`npm run build` → dist/manifest.json) and cold import time
 * on this Node (median of several fresh processes, each timing `await import(dist/<fn>/index.mjs)`),
 * plus what the VMI bundle is made of (esbuild metafile, bytes by package).
 * Targets: ≤ 1 MB, ≤ 150 ms. Never a test.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ENTRIES, ESM_REQUIRE_BANNER } from '../../scripts/build.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 7);

function say(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

/** One fresh process: how long `import()` of the bundle takes, ms. */
function importOnce(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, AWS_REGION: process.env.AWS_REGION ?? 'us-east-1', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return Number(out.toString().trim());
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return Math.round((s[Math.floor(s.length / 2)] ?? NaN) * 10) / 10;
}

/** Bytes in the VMI bundle by top-level package (or by project folder). */
async function composition(entry: string): Promise<Record<string, number>> {
  const r = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    outfile: 'out.mjs',
    banner: { js: ESM_REQUIRE_BANNER },
    logLevel: 'silent',
    legalComments: 'none',
  });
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

export async function run(): Promise<Record<string, unknown>> {
  say('npm run build …');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const manifest = JSON.parse(readFileSync(join(ROOT, 'dist/manifest.json'), 'utf8')) as { bundles: Record<string, { file: string; bytes: number }> };
  const functions: Record<string, { bytes: number; kib: number; coldImportMedianMs?: number; coldImportRuns?: number[]; importError?: string }> = {};
  for (const [name, b] of Object.entries(manifest.bundles)) {
    const lambda = ENTRIES.find((e) => e.name === name)?.lambda ?? false;
    const row: (typeof functions)[string] = { bytes: b.bytes, kib: Math.round(b.bytes / 1024) };
    // Only the Lambda functions are imported: the relay and CLI entries start working on import.
    if (lambda) {
      try {
        const runs = Array.from({ length: RUNS }, () => importOnce(join(ROOT, 'dist', b.file)));
        row.coldImportRuns = runs.map((x) => Math.round(x));
        row.coldImportMedianMs = median(runs);
      } catch (err) {
        row.importError = err instanceof Error ? err.message.split('\n')[0]! : String(err);
      }
    }
    functions[name] = row;
    say(`${name}: ${row.kib} KiB${row.coldImportMedianMs !== undefined ? `, cold import ${row.coldImportMedianMs} ms (median of ${RUNS})` : ''}`);
  }
  const vmiEntry = ENTRIES.find((e) => e.name === 'vmi')!.entry;
  return { node: process.version, functions, vmiBundleKiBByPackage: await composition(vmiEntry) };
}
