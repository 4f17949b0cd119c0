/**
 * `npm test` after the typecheck: checks and installs what the tests need
 * (scripts/test-prerequisites.ts), then runs every `test/**\/*.test.ts` file with node's test
 * runner. Fails when it finds no test file, so CI can never go green on "ran no test".
 * Extra arguments are passed on: `npm test -- test/template` runs one folder.
 */
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';
import { ensureTestPrerequisites } from './test-prerequisites.ts';
import { fileURLToPath } from 'node:url';
import { missingToolchain } from '../sandbox/real/build.ts';

/**
 * The test runner's flags. `--import scripts/test-watchdog.ts`: a test file ends at most 30 s
 * after its tests have, even when a failed set-up left a server or a child process holding its
 * event loop open, so one broken file can never hang the run (before, a failed `before()` held the
 * run until the 5-minute timeout). Not `--test-force-exit`: it silently loses verdicts (see the
 * watchdog's header).
 */
export const TEST_RUNNER_FLAGS = ['--test', '--test-concurrency=2', '--test-timeout=300000', '--import', fileURLToPath(new URL('./test-watchdog.ts', import.meta.url))] as const;

function main(args: readonly string[]): number {
  const filters = args.filter((a) => !a.startsWith('-'));
  const flags = args.filter((a) => a.startsWith('-'));
  const files = globSync('test/**/*.test.ts')
    .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
    .sort();
  if (files.length === 0) {
    process.stderr.write(`no test files matched ${filters.join(' ') || 'test/**/*.test.ts'}\n`);
    return 1;
  }
  try {
    ensureTestPrerequisites();
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    // The whole suite stops here; a chosen subset runs on (its files may need none of it).
    if (filters.length === 0) return 1;
  }
  const result = spawnSync(process.execPath, [...TEST_RUNNER_FLAGS, ...flags, ...files], {
    stdio: 'inherit',
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  // npm test is the emulator lane and needs no Go; say once where the other lane is when it cannot run here.
  if (filters.length === 0 && !process.env.VR_CONTROL_PLANE) {
    if (missingToolchain()) process.stdout.write(`npm test ran the emulator lane; the real lane (npm run test:real) needs the Go toolchain (go 1.26+), not found on PATH\n`);
  }
  return result.status ?? 1;
}

if (import.meta.main) process.exit(main(process.argv.slice(2)));
