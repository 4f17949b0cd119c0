/**
 * The headless Chromium the browser tests drive (through playwright-core), from the npm registry:
 * the devDependency `@sparticuz/chromium` carries a Linux x64 Chromium headless shell inside its
 * package tarball (bin/chromium.br, brotli-compressed, with the NSS libraries it links against in
 * bin/al2023.tar.br), so `npm ci` brings the browser and nothing is downloaded from a browser CDN
 * (which `npx playwright install` would need, and which a closed network refuses).
 *
 *   npx node scripts/chromium.ts install   # inflate it into .cache/chromium/<version>/ (npm test does this)
 *   npx node scripts/chromium.ts path      # print the executable's path
 *
 * The package's own `executablePath()` inflates into the shared /tmp/chromium of whoever runs
 * first; here each version gets its own folder in the project's `.cache/`, written to a staging
 * folder and renamed, so an interrupted install is never taken for a finished one. The bundled
 * NSS libraries are always used (LD_LIBRARY_PATH on the browser process only), so the browser
 * needs nothing from the system's packages but glibc.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packageDir = join(projectRoot, 'node_modules', '@sparticuz', 'chromium');
const cacheRoot = join(projectRoot, '.cache', 'chromium');

/**
 * Flags for a headless Chromium on a closed network: without the background-networking ones
 * Chromium keeps trying Google's hosts (refused here, many at a time); --no-sandbox because tests
 * run as root; --disable-gpu: no GPU, and the package's SwiftShader is not inflated.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The browser as installed: its executable and the folder of the libraries it loads. */
export interface ChromiumInstall {
  readonly version: string;
  readonly executable: string;
  readonly libDir: string;
}

/** The version of the npm package `npm ci` installed, or undefined when it is not installed. */
function packageVersion(): string | undefined {
  const file = join(packageDir, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Where the browser of the installed package is (or will be). */
export function chromiumInstall(version: string | undefined = packageVersion()): ChromiumInstall | undefined {
  if (version === undefined) return undefined;
  const dir = join(cacheRoot, version);
  return { version, executable: join(dir, 'chromium'), libDir: join(dir, 'lib') };
}

/** Why the npm Chromium cannot run here, or undefined when it can be installed. */
export function missingChromium(): string | undefined {
  // The package ships an x64 build only: elsewhere a browser has to come from the system.
  if (platform() !== 'linux' || arch() !== 'x64') return `Chromium: @sparticuz/chromium ships a Linux x64 browser and this is ${platform()}-${arch()}; the dashboard browser test cannot run here`;
  if (!existsSync(join(packageDir, 'bin', 'chromium.br'))) return `Chromium: ${join(packageDir, 'bin', 'chromium.br')} is missing: run npm ci (the devDependency @sparticuz/chromium carries the browser)`;
  return undefined;
}

/**
 * Inflates the package's browser and libraries into `.cache/chromium/<version>/`; does nothing
 * when they are there. Returns where they are; throws one line when they cannot be installed.
 */
export function installChromium(log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): ChromiumInstall {
  const missing = missingChromium();
  if (missing) throw new Error(missing);
  const install = chromiumInstall()!;
  if (existsSync(install.executable)) {
    log(`chromium: already installed at ${install.executable}`);
    return install;
  }
  const dir = dirname(install.executable);
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`chromium: inflating @sparticuz/chromium@${install.version} (headless shell, ~200 MB) into ${dir} ...`);
  writeFileSync(join(staging, 'chromium'), brotliDecompressSync(readFileSync(join(packageDir, 'bin', 'chromium.br'))), { mode: 0o755 });
  // al2023.tar.br holds lib/ (NSS, NSPR, expat): the only libraries the browser needs beyond glibc.
  const tar = spawnSync('tar', ['xf', '-', '-C', staging], { input: brotliDecompressSync(readFileSync(join(packageDir, 'bin', 'al2023.tar.br'))) });
  if (tar.error || tar.status !== 0) throw new Error(`chromium: could not extract the bundled libraries (tar exit ${tar.status}): ${tar.error?.message ?? tar.stderr.toString().trim()}`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  const version = spawnSync(install.executable, ['--version'], { encoding: 'utf8', env: browserEnv(install), timeout: 30_000 });
  if (version.status !== 0) throw new Error(`chromium: ${install.executable} does not start: ${(version.stderr || version.error?.message || '').trim().split('\n')[0]}`);
  log(`chromium: installed ${version.stdout.trim()} at ${install.executable}`);
  return install;
}

/** The environment the browser process runs in: the bundled libraries first. */
export function browserEnv(install: ChromiumInstall, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env = Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
  env.LD_LIBRARY_PATH = [install.libDir, ...(base.LD_LIBRARY_PATH ? [base.LD_LIBRARY_PATH] : [])].join(':');
  return env;
}

/**
 * What to give playwright-core's `chromium.launch()`: the npm browser (installed when needed), the
 * closed-network flags and the environment with its libraries. Never a system browser.
 */
export function chromiumLaunchOptions(): { executablePath: string; args: string[]; env: Record<string, string>; headless: true } {
  const install = installChromium(() => {});
  return { executablePath: install.executable, args: [...CHROMIUM_ARGS], env: browserEnv(install), headless: true };
}

if (import.meta.main) {
  try {
    const [command] = process.argv.slice(2);
    if (command === 'install') installChromium();
    else if (command === 'path') process.stdout.write(`${installChromium(() => {}).executable}\n`);
    else throw new Error('usage: npx node scripts/chromium.ts install | path');
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
