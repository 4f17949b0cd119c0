/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` (each exports
 * `run(): Promise<Record<string, unknown>>`), prints progress and a summary, and writes the
 * figures to docs/benchmarks.json. Benchmarks are never tests: nothing here passes or fails on speed.
 * Extra arguments filter the files: `npm run bench -- queue`.
 */
import { existsSync, globSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deriveCost, renderMarkdown } from '../test/bench/report.ts';

const filters = process.argv.slice(2);
const files = globSync('test/bench/*.bench.ts')
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
if (files.length === 0) {
  process.stderr.write('no benchmark files matched\n');
  process.exit(1);
}
const OUT = 'docs/benchmarks.json';
// A filtered run updates its files' entries and keeps the others' last figures.
const previous = existsSync(OUT) ? ((JSON.parse(readFileSync(OUT, 'utf8')) as { results?: Record<string, unknown> }).results ?? {}) : {};
const results: Record<string, unknown> = { ...previous };
for (const [i, file] of files.entries()) {
  process.stdout.write(`[${i + 1}/${files.length}] ${file} …\n`);
  const mod = (await import(pathToFileURL(resolve(file)).href)) as { run?: () => Promise<Record<string, unknown>> };
  if (typeof mod.run !== 'function') {
    process.stderr.write(`  ${file} exports no run(); skipped\n`);
    continue;
  }
  const t0 = performance.now();
  results[file] = await mod.run();
  process.stdout.write(`  done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
deriveCost(results);
const report = { generatedAt: new Date().toISOString(), node: process.version, cpus: cpus().length, results };
writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync('docs/benchmarks.md', `${renderMarkdown(report)}\n`);
for (const file of files) process.stdout.write(`${file}: ${JSON.stringify(results[file])}\n`);
process.stdout.write(`\n${renderMarkdown(report).split('## ')[1]?.replace(/^Summary\n/, 'summary\n') ?? ''}\n`);
process.stdout.write(`${files.length} benchmark file(s) run → ${OUT}, docs/benchmarks.md\n`);
