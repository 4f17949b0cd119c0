/**
 * DynamoDB Local for tests and local runs (docs/platform.md).
 *
 *   npx node scripts/dynamodb-local.ts install          # fetch the emulator into .cache/dynamodb-local/
 *   npx node scripts/dynamodb-local.ts start [--port P] # run it in the foreground, in memory
 *
 * The emulator is Amazon's DynamoDB Local jar, taken from the npm tarball
 * `amplify-dynamodb-simulator@2.9.30` with `npm pack` (installing the package would pull in ~280
 * dependencies) — only its `emulator/` folder is kept. The jar is under the DynamoDB Local licence:
 * tests only, never committed (`.cache/` is git-ignored). It runs on Java 17+: the system's, or
 * else a JRE from the npm registry (scripts/jre.ts).
 *
 * DynamoDB Local has no host/bind-address flag (its `-help` lists -cors, -dbPath,
 * -delayTransientStatuses, -disableTelemetry, -help, -inMemory, -optimizeDbBeforeStartup, -port,
 * -sharedDb, -version), so it listens on all interfaces; clients always talk to it on 127.0.0.1.
 * It runs with -sharedDb (one database whatever the credentials/region) and -disableTelemetry.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { javaCommand } from './jre.ts';

export const EMULATOR_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where `install` puts the emulator; override with DYNAMODB_LOCAL_DIR. */
export const cacheDir = process.env.DYNAMODB_LOCAL_DIR ?? join(projectRoot, '.cache', 'dynamodb-local');
export const emulatorDir = join(cacheDir, 'emulator');
export const jarPath = join(emulatorDir, 'DynamoDBLocal.jar');
export const INSTALL_HINT = '`npm test` installs it (and a JRE when the system has no Java 17+) by itself, or run `npx node scripts/dynamodb-local.ts install`';

/** Why DynamoDB Local cannot start here, or undefined when it can. */
export function missingPrerequisite(): string | undefined {
  if (!existsSync(jarPath)) return `DynamoDB Local is not installed (${jarPath} is missing): ${INSTALL_HINT}`;
  if (!javaCommand()) return `DynamoDB Local needs Java 17+, and neither the system's nor the npm registry's JRE is installed: ${INSTALL_HINT}`;
  return undefined;
}

/** Fetches and extracts the emulator; does nothing when it is already there. */
export function install(log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): void {
  if (existsSync(jarPath)) {
    log(`dynamodb-local: already installed at ${emulatorDir}`);
    return;
  }
  mkdirSync(cacheDir, { recursive: true });
  log(`dynamodb-local: npm pack ${EMULATOR_PACKAGE} (about 56 MB) into ${cacheDir} ...`);
  const pack = spawnSync('npm', ['pack', EMULATOR_PACKAGE, '--pack-destination', cacheDir, '--silent'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (pack.error || pack.status !== 0) {
    throw new Error(`dynamodb-local: npm pack ${EMULATOR_PACKAGE} failed (exit ${pack.status}): ${pack.error?.message ?? pack.stderr.trim()}`);
  }
  const tarball = readdirSync(cacheDir).find((f) => f.startsWith('amplify-dynamodb-simulator-') && f.endsWith('.tgz'));
  if (!tarball) throw new Error(`dynamodb-local: npm pack reported success but no tarball is in ${cacheDir}`);
  log(`dynamodb-local: extracting package/emulator from ${tarball} ...`);
  // Extract into a temporary folder and rename at the end, so an interrupted install never leaves
  // a half-extracted emulator that the idempotency check above would take for a finished one.
  const staging = join(cacheDir, 'staging');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  const tar = spawnSync('tar', ['xzf', join(cacheDir, tarball), '-C', staging, '--strip-components=1', 'package/emulator'], {
    encoding: 'utf8',
  });
  if (tar.error || tar.status !== 0) {
    throw new Error(`dynamodb-local: tar failed (exit ${tar.status}): ${tar.error?.message ?? tar.stderr.trim()}`);
  }
  if (!existsSync(join(staging, 'emulator', 'DynamoDBLocal.jar'))) {
    throw new Error(`dynamodb-local: ${tarball} has no emulator/DynamoDBLocal.jar; has the package layout changed?`);
  }
  rmSync(emulatorDir, { recursive: true, force: true });
  spawnSync('mv', [join(staging, 'emulator'), emulatorDir]);
  rmSync(staging, { recursive: true, force: true });
  rmSync(join(cacheDir, tarball), { force: true });
  log(`dynamodb-local: installed ${jarPath}`);
  const missing = missingPrerequisite();
  if (missing) log(`dynamodb-local: warning: ${missing}`);
}

/** Starts the emulator in memory on `port`; the caller owns the process. */
export function startProcess(port: number, stdio: 'inherit' | 'pipe' = 'pipe'): ChildProcess {
  const missing = missingPrerequisite();
  if (missing) throw new Error(missing);
  return spawn(
    javaCommand()!,
    [`-Djava.library.path=${join(emulatorDir, 'DynamoDBLocal_lib')}`, '-jar', jarPath, '-inMemory', '-sharedDb', '-disableTelemetry', '-port', String(port)],
    // cwd = emulator folder: the jar resolves DynamoDBLocal_lib relative to it.
    { cwd: emulatorDir, stdio: ['ignore', stdio, stdio] },
  );
}

function parsePort(args: readonly string[]): number {
  const i = args.indexOf('--port');
  if (i < 0) return 8000;
  const port = Number(args[i + 1]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--port: expected 1-65535, got ${args[i + 1] ?? 'nothing'}`);
  return port;
}

function main(args: readonly string[]): void {
  const [command, ...rest] = args;
  if (command === 'install') {
    install();
    return;
  }
  if (command === 'start') {
    const port = parsePort(rest);
    process.stdout.write(`dynamodb-local: starting on port ${port} (in memory; clients use http://127.0.0.1:${port})\n`);
    const child = startProcess(port, 'inherit');
    const stop = (): void => void child.kill('SIGTERM');
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    child.on('exit', (code) => process.exit(code ?? 0));
    return;
  }
  throw new Error('usage: npx node scripts/dynamodb-local.ts install | start [--port P]');
}

if (import.meta.main) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
