/**
 * The real Kubernetes control plane as the sandbox's API server: starts our binary
 * (infra/control-plane/: etcd embedded, upstream kube-apiserver, kube-controller-manager and
 * kube-scheduler on 127.0.0.1 with TLS and RBAC), applies the project's RBAC from
 * infra/kubernetes/ plus the sandbox's own bindings, and hands back the emulator's
 * {@link ApiServer} shape so every caller keeps using `kubeConfig(identity)`, `counters` and
 * `audit` (both read from the API server's own audit log). Emulator-only hooks (fault injection,
 * `control`) throw {@link EmulatorOnlyError}: tests that need them skip on this lane.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { ApiServer, ApiServerAdmission, ApiServerControl } from '../apiserver/index.ts';
import type { Faults } from '../apiserver/faults.ts';
import { createClock, type Clock } from '../clock.ts';
import { AuditFile } from './audit-file.ts';
import { ensureBuilt } from './build.ts';
import type { PprofEndpoint } from './pprof.ts';
import { CONTROLLERS } from '../../shared/controllers.ts';
import { controllerRbacFile, IDENTITIES, localRuntimeRoleBindings, sandboxRbac } from './identities.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CRDS_DIR = join(projectRoot, 'infra', 'crds');
const RBAC_FILES = ['namespace.yaml', 'relay-rbac.yaml', ...CONTROLLERS.map(controllerRbacFile)].map((f) => join(projectRoot, 'infra', 'kubernetes', f));

/** Thrown by hooks only the emulator has (fault injection, history compaction…). */
export class EmulatorOnlyError extends Error {
  constructor(what: string) {
    super(`${what} is emulator-only: the real control plane (VR_CONTROL_PLANE=real) has no such hook`);
    this.name = 'EmulatorOnlyError';
  }
}

/** Which control plane a sandbox runs on: `VR_CONTROL_PLANE` (emulator unless it says real). */
export type ControlPlane = 'emulator' | 'real';
export function controlPlaneFromEnv(env: NodeJS.ProcessEnv = process.env): ControlPlane {
  const v = env.VR_CONTROL_PLANE?.trim();
  if (!v || v === 'emulator') return 'emulator';
  if (v === 'real') return 'real';
  throw new Error(`VR_CONTROL_PLANE must be "emulator" or "real", not ${JSON.stringify(v)}`);
}

/** True on the real lane (tests use it to skip what is emulator-only, saying why). */
export const onRealControlPlane = (): boolean => controlPlaneFromEnv() === 'real';

/** What the binary writes to its ready file. */
interface ReadyInfo {
  server: string;
  caFile: string;
  tokens: Record<string, string>;
  users: Record<string, string>;
  auditLog: string;
  version: string;
  /** Each process's /debug/pprof base URL, when started with --pprof-addr. */
  pprof?: Record<string, string>;
}

export interface RealApiServerOptions {
  clock?: Clock;
  /** Told about each start step (default silent). */
  log?: (line: string) => void;
  /**
   * Apply the product's RBAC from infra/kubernetes/ at start (default true). False leaves it to
   * the caller, e.g. a test that installs it with the Helm chart (the sandbox's own RBAC, which
   * binds the local runtime's group to the product's roles by name, is applied all the same).
   */
  productRbac?: boolean;
  /**
   * Serve Go's CPU profiles of every control-plane process (`--pprof-addr`, infra/control-plane/pprof.go);
   * default VR_CONTROL_PLANE_PPROF=1. The benchmarks turn it on for BENCH_CPU_PROFILE_DIR.
   */
  pprof?: boolean;
}

/** The real control plane, shaped as the emulator's ApiServer; see the module comment. */
export interface RealApiServer extends ApiServer {
  /** The Kubernetes version the server reports (e.g. v1.37.2). */
  version: string;
  /** The state directory (logs of every component, the audit log). */
  dir: string;
  /** The user name the API server sees for an identity. */
  userOf(identity: string): string;
  /** How to reach each process's /debug/pprof (`serve` = etcd's process), when started with `pprof`. */
  pprof?: Readonly<Record<string, PprofEndpoint>>;
}

function emulatorOnly<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_t, prop) => {
      if (prop === 'then') return undefined;
      throw new EmulatorOnlyError(`${what}.${String(prop)}`);
    },
  });
}

/** Starts the real control plane (building the binary first when needed). */
export async function startRealApiServer(opts: RealApiServerOptions = {}): Promise<RealApiServer> {
  const log = opts.log ?? (() => undefined);
  const bin = await ensureBuilt(log);
  const dir = await mkdtemp(join(tmpdir(), 'vr-control-plane-'));
  const readyFile = join(dir, 'ready.json');
  const identitiesFile = join(dir, 'identities.json');
  await writeFile(identitiesFile, JSON.stringify(IDENTITIES));
  const args = ['serve', '--dir', dir, '--crds', CRDS_DIR, '--ready-file', readyFile, '--identities', identitiesFile];
  if (opts.pprof ?? process.env.VR_CONTROL_PLANE_PPROF === '1') args.push('--pprof-addr', '127.0.0.1:0');
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-8000);
    for (const line of b.toString().split('\n')) if (line.trim()) log(line);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = await Promise.race([
    new Promise<boolean>((r) => child.stdout.on('data', (b: Buffer) => b.toString().includes('ready ') && r(true))),
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(false), 300_000).unref()),
  ]);
  const stopChild = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }
  };
  if (!ready) {
    await stopChild();
    throw new Error(`the real control plane did not start (logs in ${dir}):\n${stderr.trim()}`);
  }
  const info = JSON.parse(await readFile(readyFile, 'utf8')) as ReadyInfo;
  const ca = await readFile(info.caFile, 'utf8');
  const clock = opts.clock ?? createClock();
  // Counters and audit entries name identities as callers do (kubeConfig('relay')), not by user.
  const idOfUser = new Map(Object.entries(info.users).map(([id, user]) => [user, id]));
  const audit = new AuditFile(info.auditLog, clock, (user) => idOfUser.get(user) ?? user);

  const kubeConfig = (identity = 'admin'): KubeConfig => {
    const token = info.tokens[identity];
    if (!token) throw new Error(`identity ${JSON.stringify(identity)} has no token on the real control plane; known: ${Object.keys(info.tokens).sort().join(', ')} (sandbox/real/identities.ts)`);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'control-plane', server: info.server, caData: Buffer.from(ca).toString('base64') }],
      users: [{ name: identity, token }],
      contexts: [{ name: 'control-plane', cluster: 'control-plane', user: identity, namespace: 'default' }],
      currentContext: 'control-plane',
    });
    return kc;
  };
  try {
    await applyRbac(kubeConfig('admin'), opts.productRbac ?? true);
    // Pods are refused until the service account controller has made the namespace's `default`
    // ServiceAccount: a started control plane is one that takes pods.
    for (const ns of ['default', 'kubevirt']) await waitServiceAccount(kubeConfig('admin'), ns);
  } catch (err) {
    await stopChild();
    throw err;
  }
  log(`control-plane: Kubernetes ${info.version} ready at ${info.server}`);
  // The secure ports' profiles need an identity that may read /debug/pprof: the admin's token.
  // kube-apiserver serves with our CA's certificate; the other two with one they made themselves.
  const endpoint = (component: string, base: string): PprofEndpoint =>
    !base.startsWith('https:') ? { base } : component === 'kube-apiserver' ? { base, token: info.tokens.admin!, ca } : { base, token: info.tokens.admin!, selfSigned: true };
  const pprof = info.pprof ? Object.fromEntries(Object.entries(info.pprof).map(([component, base]) => [component, endpoint(component, base)])) : undefined;
  let closing: Promise<void> | undefined;
  return {
    url: info.server,
    version: info.version,
    dir,
    userOf: (identity) => info.users[identity] ?? identity,
    ...(pprof ? { pprof } : {}),
    kubeConfig,
    async writeKubeconfig(path, identity = 'admin') {
      await writeFile(path, kubeConfig(identity).exportConfig() + '\n', { mode: 0o600 });
      return path;
    },
    faults: emulatorOnly<Faults>('fault injection (apiServer.faults)'),
    counters: audit.counters,
    audit,
    clock,
    control: emulatorOnly<ApiServerControl>('apiServer.control'),
    // In-process admission hooks; the real server would need a webhook (virt-api) instead.
    admission: emulatorOnly<ApiServerAdmission>('apiServer.admission'),
    close: () =>
      (closing ??= (async () => {
        audit.close();
        await stopChild();
        if (!opts.clock) clock.dispose();
        if (!process.env.VR_CONTROL_PLANE_KEEP) await rm(dir, { recursive: true, force: true });
      })()),
  };
}

/** Waits (up to a minute) for a namespace's `default` ServiceAccount. */
export async function waitServiceAccount(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await core.readNamespacedServiceAccount({ namespace, name: 'default' });
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 404 || Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates (or leaves) one object. */
async function ensure(api: KubernetesObjectApi, obj: KubernetesObject): Promise<void> {
  try {
    await api.create(obj);
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw new Error(`creating ${obj.kind} ${obj.metadata?.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The project's RBAC objects (infra/kubernetes/, unless `product` is false) and the sandbox's bindings of its identities. */
async function applyRbac(admin: KubeConfig, product: boolean): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(admin);
  const objects: KubernetesObject[] = [];
  for (const file of product ? RBAC_FILES : []) {
    for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
      const obj = doc.toJSON() as KubernetesObject | null;
      if (obj?.kind) objects.push(obj);
    }
  }
  // Namespaces first, then everything else in file order.
  objects.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
  const roles = objects.filter((o) => o.kind === 'Role').map((o) => ({ name: o.metadata?.name ?? '', namespace: o.metadata?.namespace ?? '' }));
  // The emulator starts with `kubevirt` too (the KubeVirt CR lives there).
  const kubevirtNs = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } };
  for (const obj of [kubevirtNs, ...objects, ...sandboxRbac(), ...localRuntimeRoleBindings(roles)]) await ensure(api, obj);
}
