/**
 * `npm test` after the typecheck: runs every `test/**\/*.test.ts` file with node's test runner.
 * Fails when it finds no test file, so CI can never go green on "ran no test".
 * Extra arguments are passed on: `npm test -- test/template` runs one folder.
 */
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';

const args = process.argv.slice(2);
const filters = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
const files = globSync('test/**/*.test.ts')
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
if (files.length === 0) {
  process.stderr.write(`no test files matched ${filters.join(' ') || 'test/**/*.test.ts'}\n`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=300000', ...flags, ...files],
  { stdio: 'inherit', env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } },
);
process.exit(result.status ?? 1);
