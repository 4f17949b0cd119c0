/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` (each exports
 * `run(): Promise<Record<string, unknown>>`), prints progress and a summary, and writes the
 * figures to docs/benchmarks.json. Benchmarks are never tests: nothing here passes or fails on speed.
 * Extra arguments filter the files: `npm run bench -- queue`.
 *
 * First it installs what the files need (scripts/test-prerequisites.ts: DynamoDB Local, and a JRE
 * when the system has none; the real control plane's columns build it themselves, or skip without
 * Go), so a fresh clone runs it without `npm test` before.
 * A file that cannot run (a missing prerequisite, a crash) says why in one line and keeps its last
 * figures; the other files run on, and the run exits 1 naming it at the end.
 */
import { existsSync, globSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deriveCost, renderMarkdown, type BenchRun } from '../test/bench/report.ts';
import { DYNAMODB_PREREQUISITES, ensureTestPrerequisites } from './test-prerequisites.ts';
import { kubevirtSetup } from '../test/bench/support/kubevirt.ts';
import { ALL_SYSTEMS, chooseSystems } from '../test/bench/support/system-choice.ts';

const filters = process.argv.slice(2);
const files = globSync('test/bench/*.bench.ts')
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
if (files.length === 0) {
  process.stderr.write('no benchmark files matched\n');
  process.exit(1);
}
try {
  ensureTestPrerequisites((line) => process.stdout.write(`${line}\n`), DYNAMODB_PREREQUISITES);
} catch (err) {
  // The files that need what is missing fail below, each in one line; the others run.
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
}
// The systems' knobs, checked before any file runs: a wrong name or path is one line now, not
// an error half an hour in (an unset KUBEVIRT_VIRT_CONTROLLER is no error: each row says it skipped).
try {
  chooseSystems('bench', ALL_SYSTEMS, () => undefined);
  const kubevirt = kubevirtSetup();
  if (process.env.KUBEVIRT_VIRT_CONTROLLER && 'skipped' in kubevirt) throw new Error(kubevirt.skipped);
} catch (err) {
  process.stderr.write(`npm run bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
const OUT = 'docs/benchmarks.json';
// A filtered run updates its files' entries and keeps the others' last figures.
const last = existsSync(OUT) ? (JSON.parse(readFileSync(OUT, 'utf8')) as { results?: Record<string, unknown>; run?: BenchRun }) : {};
const previous = last.results ?? {};
const results: Record<string, unknown> = { ...previous };
const QUICK = process.env.BENCH_QUICK === '1';
const secondsByFile: Record<string, number> = {};
const failed: { file: string; why: string }[] = [];
const runStarted = performance.now();
const elapsed = () => `${((performance.now() - runStarted) / 60_000).toFixed(1)} min`;
for (const [i, file] of files.entries()) {
  process.stdout.write(`[${i + 1}/${files.length}] ${file} … (${elapsed()} into the run)\n`);
  const t0 = performance.now();
  try {
    const mod = (await import(pathToFileURL(resolve(file)).href)) as { run?: () => Promise<Record<string, unknown>> };
    if (typeof mod.run !== 'function') {
      process.stderr.write(`  ${file} exports no run(); skipped\n`);
      continue;
    }
    results[file] = await mod.run();
  } catch (err) {
    // One line: the first line of the file's own error. Its last figures stay; the run goes on.
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    failed.push({ file, why });
    process.stderr.write(`  ${file} could not run: ${why}\n`);
    continue;
  }
  secondsByFile[file] = Math.round((performance.now() - t0) / 100) / 10;
  process.stdout.write(`  done in ${secondsByFile[file]} s\n`);
}
deriveCost(results);
// How long the run took, by file: the bench's own time budget (30 min in full, 5 quick) is a
// figure like the others. Only a run of every file has a total worth judging.
// A filtered run keeps the last whole run's total and updates its files' times.
// A run with a file that could not run is no whole run either.
const run: BenchRun =
  filters.length === 0 && failed.length === 0
    ? { quick: QUICK, secondsByFile, totalSeconds: Math.round((performance.now() - runStarted) / 100) / 10 }
    : { ...(last.run ?? { quick: QUICK }), secondsByFile: { ...last.run?.secondsByFile, ...secondsByFile } };
const report = { generatedAt: new Date().toISOString(), node: process.version, cpus: cpus().length, run, results };
writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync('docs/benchmarks.md', `${renderMarkdown(report)}\n`);
for (const file of files) process.stdout.write(`${file}: ${JSON.stringify(results[file])}\n`);
process.stdout.write(`\n${renderMarkdown(report).split('## ')[1]?.replace(/^Summary\n/, 'summary\n') ?? ''}\n`);
process.stdout.write(`${files.length - failed.length} of ${files.length} benchmark file(s) run → ${OUT}, docs/benchmarks.md\n`);
if (failed.length > 0) {
  for (const f of failed) process.stderr.write(`could not run ${f.file} (its last figures kept): ${f.why}\n`);
  // A file that failed half-way may have left a server holding the event loop open.
  process.exit(1);
}
