/**
 * Builds the real control plane (infra/control-plane/, our Go module around the upstream
 * kube-apiserver, kube-controller-manager, kube-scheduler and embedded etcd) into `.cache/`
 * (`npm run control-plane:build`, or on demand when the real lane starts).
 *
 * The binary lives at `.cache/control-plane/<hash>/control-plane`, where <hash> covers every file
 * of infra/control-plane/: it is rebuilt only when that module changes. The first build downloads
 * the Kubernetes modules (~1 GB through the Go module proxy) and compiles them: many minutes on
 * 2 cores; later builds of the same module are instant (and Go's own build cache makes a rebuild
 * after a small change of ours quick). Override the output with VR_CONTROL_PLANE_BIN.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const moduleDir = join(projectRoot, 'infra', 'control-plane');
const cacheRoot = join(projectRoot, '.cache', 'control-plane');
/** Builds kept in the cache, this one included (each is ~150 MB). */
const KEPT_BUILDS = 3;

/** Hash of every file in infra/control-plane/ (names and contents). */
export function moduleHash(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(moduleDir).filter((f) => !f.startsWith('.')).sort()) {
    h.update(f).update('\0').update(readFileSync(join(moduleDir, f))).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/** Where the binary for the current sources is (or will be). */
export function binaryPath(): string {
  return process.env.VR_CONTROL_PLANE_BIN ?? join(cacheRoot, moduleHash(), 'control-plane');
}

/** The Kubernetes release our go.mod requires (the version the binary reports). */
export function kubernetesVersion(): string {
  const m = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v\d+\.\d+\.\d+)\s*$/m.exec(readFileSync(join(moduleDir, 'go.mod'), 'utf8'));
  if (!m) throw new Error(`control-plane: no "k8s.io/kubernetes vX.Y.Z" requirement in ${join(moduleDir, 'go.mod')}`);
  return m[1]!;
}

/** True when the Go toolchain answers on PATH. */
export function hasGo(): boolean {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  return !go.error && go.status === 0;
}

/** Why the binary cannot be built here, or undefined. */
export function missingToolchain(): string | undefined {
  if (!hasGo()) return 'control-plane: the Go toolchain (go 1.26+) was not found on PATH; it is needed to build the real control plane (npm run control-plane:build)';
  return undefined;
}

/**
 * Runs `go <args>` at low priority, telling `log` each module it downloads and, every 30 s, that
 * it is still compiling (lines prefixed with `label`); rejects with the last 30 lines of its
 * output when it fails. Shared by the control plane's build and Helm's (infra/helm/cli.ts).
 */
export function runGo(args: readonly string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; label: string; log: (line: string) => void }): Promise<void> {
  const { label, log } = opts;
  const started = Date.now();
  return new Promise<void>((resolvePromise, reject) => {
    const child = spawn('nice', ['-n', '10', 'go', ...args], { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (b: Buffer): void => {
      output += b.toString();
      for (const line of b.toString().split('\n')) if (line.startsWith('go: downloading')) log(`${label}: ${line.slice(4)}`);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const ticker = setInterval(() => log(`${label}: still compiling (${Math.round((Date.now() - started) / 1000)} s)…`), 30_000);
    child.on('error', (err) => {
      clearInterval(ticker);
      reject(new Error(`${label}: could not run go ${args[0]}: ${err.message}`));
    });
    child.on('exit', (code) => {
      clearInterval(ticker);
      if (code === 0) resolvePromise();
      else reject(new Error(`${label}: go ${args[0]} failed (exit ${code}):\n${output.trim().split('\n').slice(-30).join('\n')}`));
    });
  });
}

/**
 * Builds the binary unless it is already there for these sources; resolves to its path. Progress
 * goes to `log` (a line every 30 s while the compiler runs).
 */
export async function ensureBuilt(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  const out = binaryPath();
  if (existsSync(out)) return out;
  const missing = missingToolchain();
  if (missing) throw new Error(missing);
  const version = kubernetesVersion();
  const hash = moduleHash();
  const cacheFirst = !existsSync(join(cacheRoot)) || readdirSync(cacheRoot).length === 0;
  log(`control-plane: building Kubernetes ${version} (kube-apiserver, kube-controller-manager, kube-scheduler, etcd) from infra/control-plane/ into ${dirname(out)}`);
  if (cacheFirst) log('control-plane: the first build is long (a ~1 GB module download and many minutes of compiling on 2 cores); it is cached afterwards');
  const [major, minor] = version.replace(/^v/, '').split('.');
  const pkg = 'k8s.io/component-base/version';
  const ldflags = [
    '-s -w',
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
  ].join(' ');
  const tmp = `${out}.partial`;
  mkdirSync(dirname(out), { recursive: true });
  const started = Date.now();
  await runGo(['build', '-mod=readonly', '-ldflags', ldflags, '-o', tmp, '.'], { cwd: moduleDir, label: 'control-plane', log });
  renameSync(tmp, out);
  // Builds of other sources: several checkouts (worktrees) may share one .cache and run their
  // own sources' binary at the same time, so only builds beyond the newest few are removed.
  const builds = readdirSync(cacheRoot)
    .filter((d) => d !== hash)
    .map((d) => ({ d, at: statSync(join(cacheRoot, d)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { d } of builds.slice(KEPT_BUILDS - 1)) rmSync(join(cacheRoot, d), { recursive: true, force: true });
  log(`control-plane: built ${out} in ${Math.round((Date.now() - started) / 1000)} s`);
  return out;
}
