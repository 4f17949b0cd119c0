/**
 * The Helm CLI the chart (infra/helm/virt-reconciler/) is linted, templated and installed with:
 * the real upstream Helm, `helm.sh/helm/v4/cmd/helm` at a pinned version, built from the Go module
 * proxy into `.cache/helm/<version>/helm` on first use (as the real control plane is built, see
 * sandbox/real/build.ts), with progress lines. Later uses are instant; a new version is a new folder.
 * Override the binary with VR_HELM_BIN (a Helm 4 you already have).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasGo, runGo } from '../../sandbox/real/build.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cacheRoot = join(projectRoot, '.cache', 'helm');

/** The upstream Helm release the project builds and tests its chart with. */
export const HELM_VERSION = 'v4.3.2';
const HELM_PACKAGE = 'helm.sh/helm/v4/cmd/helm';

/** Where the Helm binary for HELM_VERSION is (or will be). */
export function helmPath(): string {
  return process.env.VR_HELM_BIN ?? join(cacheRoot, HELM_VERSION, 'helm');
}

/** Why Helm cannot be built here, or undefined. */
export function missingHelmToolchain(): string | undefined {
  if (!hasGo()) return `helm: the Go toolchain (go 1.26+) was not found on PATH; it is needed to build Helm ${HELM_VERSION} from the Go module proxy`;
  return undefined;
}

/**
 * Builds Helm unless it is already there; resolves to its path. Progress goes to `log` (module
 * downloads as they happen, then a line every 30 s while the compiler runs).
 */
export async function ensureHelm(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  const out = helmPath();
  if (existsSync(out)) return out;
  const missing = missingHelmToolchain();
  if (missing) throw new Error(missing);
  const dir = dirname(out);
  // `go install` writes into GOBIN: a staging folder renamed at the end, so an interrupted build
  // never leaves a half-written binary that the check above would take for a finished one.
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  log(`helm: building Helm ${HELM_VERSION} (${HELM_PACKAGE}) from the Go module proxy into ${dir}`);
  // Helm reads its own version from this variable (its Makefile sets it the same way).
  const ldflags = `-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}`;
  const started = Date.now();
  await runGo(['install', '-ldflags', ldflags, `${HELM_PACKAGE}@${HELM_VERSION}`], {
    cwd: staging,
    env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' },
    label: 'helm',
    log,
  });
  if (!existsSync(join(staging, 'helm'))) throw new Error(`helm: go install reported success but ${join(staging, 'helm')} is missing`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  // Older versions are of no further use.
  for (const d of readdirSync(cacheRoot)) if (d !== HELM_VERSION) rmSync(join(cacheRoot, d), { recursive: true, force: true });
  log(`helm: built ${out} in ${Math.round((Date.now() - started) / 1000)} s`);
  return out;
}

/** The result of one Helm command. */
export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs Helm (building it first when needed) with `args`; never throws on a non-zero exit. */
export async function helm(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<HelmResult> {
  const bin = await ensureHelm();
  // HELM_*_HOME in a throw-away place: a run never reads or writes the user's own Helm settings.
  const home = join(cacheRoot, 'home');
  const r = spawnSync(bin, args, {
    cwd: options.cwd ?? projectRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data'), ...options.env },
  });
  if (r.error) throw new Error(`helm: could not run ${bin}: ${r.error.message}`);
  // The chart's crds/ are links to infra/crds/ (one copy of each CRD): Helm says so for each
  // link at every run, which is noise, not news.
  const stderr = r.stderr.split('\n').filter((l) => !l.includes('found symbolic link in path')).join('\n');
  return { status: r.status ?? 1, stdout: r.stdout, stderr };
}
