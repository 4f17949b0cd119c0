/**
 * KubeVirt's own virt-controller as a third system in the benchmarks, beside the serverless
 * runtime and the baseline: the unmodified binary (KUBEVIRT_VIRT_CONTROLLER names it), run out of
 * cluster against the bench's sandbox as identity `kubevirt-controller`, so the API server's
 * request counters and audit log keep its requests apart from ours.
 *
 * What it needs to run out of cluster: `--kubeconfig` (it ignores $KUBECONFIG), the namespace
 * `kubevirt` (the sandbox makes it), KubeVirt's CRDs (the sandbox serves them), the
 * `apiextensions.k8s.io` CRD list/watch and `networking.k8s.io` Ingresses, the launcher and
 * exporter images and a free `--port`; it takes the Lease kubevirt/virt-controller before any of
 * its loops starts. Both control planes serve everything now (the emulator since issue 38); for
 * an older emulator that does not serve the CRD list or Ingresses, KubeVirt's `apishim`
 * (KUBEVIRT_APISHIM, or next to the virt-controller binary) sits in front: a proxy answering those two itself — with the CRDs of
 * infra/crds/, the same list the real control plane installs — and forwarding the rest, the
 * bearer token included. Each run says which path it took. The binary and the shim are KubeVirt's;
 * nothing of them is in this repository.
 *
 * The emulator speaks plain HTTP, and client-go sends a kubeconfig's credentials only over TLS:
 * against it virt-controller's requests would carry no token and count as the emulator's default
 * identity. So on the emulator lane it talks TLS to a loopback terminator in this process (a
 * certificate made for the run, a byte pipe to the shim or the emulator), and its bearer token
 * arrives: the counters name it `kubevirt-controller` on both lanes. The shim's own reads (it GETs
 * an object before forwarding a JSON patch) carry no token and are not counted as KubeVirt's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { loadCrds } from '../../../sandbox/apiserver/crds.ts';
import { issueServingCertificate, makeCa } from '../../../sandbox/pki.ts';
import { KUBEVIRT_CONTROLLER_IDENTITY } from '../../../sandbox/real/identities.ts';
import type { ControlPlane } from '../../../sandbox/real/control-plane.ts';
import { procCpuMicros, procMemory } from './proc-stat.ts';

export { KUBEVIRT_CONTROLLER_IDENTITY };

/** Images virt-controller puts into the pods it renders (the sandbox's nodes pull nothing). */
const LAUNCHER_IMAGE = 'quay.io/kubevirt/virt-launcher:v1.9.0';
const EXPORTER_IMAGE = 'quay.io/kubevirt/virt-exportserver:v1.9.0';
/** How long virt-controller may take to lead and start its loops (a loaded machine, a cold cache). */
const START_TIMEOUT_MS = 180_000;
/** The line virt-controller logs when its VMI controller starts (after it leads and its informers started). */
const VMI_CONTROLLER_STARTED = 'Starting vmi controller.';

/** Where KubeVirt's binaries are, or why the KubeVirt column is skipped. */
export type KubeVirtSetup = { readonly binary: string; readonly shim: string | undefined } | { readonly skipped: string };

/** KUBEVIRT_VIRT_CONTROLLER (and KUBEVIRT_APISHIM): set and executable, or why not. */
export function kubevirtSetup(env: NodeJS.ProcessEnv = process.env): KubeVirtSetup {
  const binary = env.KUBEVIRT_VIRT_CONTROLLER?.trim();
  if (!binary) return { skipped: "KUBEVIRT_VIRT_CONTROLLER is not set (the path of KubeVirt's virt-controller binary)" };
  const bad = notExecutable(binary);
  if (bad) return { skipped: `KUBEVIRT_VIRT_CONTROLLER=${binary}: ${bad}` };
  const named = env.KUBEVIRT_APISHIM?.trim();
  const shim = named || join(dirname(binary), 'apishim');
  if (named && notExecutable(named)) return { skipped: `KUBEVIRT_APISHIM=${named}: ${notExecutable(named)}` };
  return { binary, shim: notExecutable(shim) ? undefined : shim };
}

function notExecutable(path: string): string | undefined {
  if (!existsSync(path)) return 'no such file';
  if (!statSync(path).isFile()) return 'not a file';
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch {
    return 'not executable';
  }
}

/** One kind of warning or error virt-controller logged, and how often. */
export interface LogFinding {
  readonly level: string;
  readonly message: string;
  readonly count: number;
}

/** A running virt-controller; see the module comment. */
export interface VirtController {
  readonly pid: number;
  /**
   * How it reached the API server: `direct` (the real control plane), or on the emulator
   * `apishim <path>, behind a TLS front` (`the emulator, behind a TLS front` once the emulator serves
   * the CRD list and Ingresses itself).
   */
  readonly apiPath: string;
  /** Its process's CPU time so far (user + system), µs. */
  cpuMicros(): number;
  /** Its resident memory now and at its peak, bytes. */
  memory(): { rssBytes: number; hwmBytes: number };
  /** The shim's CPU time so far, µs (0 without a shim): overhead on the machine, not virt-controller's. */
  shimCpuMicros(): number;
  /** Its log's warnings, errors and fatal lines so far, grouped by message, most frequent first. */
  findings(): LogFinding[];
  stop(): Promise<void>;
}

/** Starts virt-controller against the cluster `kc` (an admin-like identity's kubeconfig is `user`); resolves once it leads and its VMI loop started. */
export async function startVirtController(
  setup: Extract<KubeVirtSetup, { binary: string }>,
  lane: ControlPlane,
  kc: KubeConfig,
  user: KubeConfig,
): Promise<VirtController> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-kubevirt-'));
  const children: ChildProcess[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const child of children.reverse()) await stopChild(child);
    for (const close of closers) await close();
    const keep = process.env.BENCH_KUBEVIRT_LOG_DIR;
    if (keep && existsSync(join(dir, 'virt-controller.log'))) {
      mkdirSync(keep, { recursive: true });
      copyFileSync(join(dir, 'virt-controller.log'), join(keep, `virt-controller-${lane}-${Date.now()}.log`));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    let server = kc.getCurrentCluster()?.server ?? '';
    let apiPath = 'direct';
    let shim: ChildProcess | undefined;
    if (lane === 'emulator' && !(await servesWhatItNeeds(user))) {
      if (!setup.shim) throw new Error(`the emulator serves no CRD list/watch or Ingresses, and no apishim was found (KUBEVIRT_APISHIM, or ${join(dirname(setup.binary), 'apishim')})`);
      const crds = join(dir, 'crds.json');
      writeFileSync(crds, JSON.stringify(crdObjects()));
      shim = spawn(setup.shim, ['--listen', '127.0.0.1:0', '--upstream', server, '--crds', crds], { stdio: ['ignore', 'pipe', openSync(join(dir, 'apishim.log'), 'w')] });
      children.push(shim);
      server = await listeningUrl(shim);
      apiPath = `apishim ${setup.shim}`;
    }
    let config = kc.exportConfig();
    if (lane === 'emulator') {
      const front = await tlsFront(server);
      closers.push(front.close);
      config = tlsKubeconfig(front.url, front.caPem, kc.getCurrentUser()?.token ?? KUBEVIRT_CONTROLLER_IDENTITY);
      apiPath = `${apiPath === 'direct' ? 'the emulator' : apiPath}, behind a TLS front`;
    }
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, config, { mode: 0o600 });
    const logPath = join(dir, 'virt-controller.log');
    const log = openSync(logPath, 'w');
    const vc = spawn(setup.binary, ['--kubeconfig', kubeconfig, '--launcher-image', LAUNCHER_IMAGE, '--exporter-image', EXPORTER_IMAGE, '--listen', '127.0.0.1', '--port', String(await freePort())], { stdio: ['ignore', log, log] });
    closeSync(log);
    children.push(vc);
    await waitLeading(vc, user, logPath);
    const pid = vc.pid!;
    const shimPid = shim?.pid;
    return {
      pid,
      apiPath,
      cpuMicros: () => procCpuMicros(pid),
      memory: () => procMemory(pid),
      shimCpuMicros: () => (shimPid ? procCpuMicros(shimPid) : 0),
      findings: () => logFindings(readFileSync(logPath, 'utf8')),
      stop: stopAll,
    };
  } catch (err) {
    const tail = existsSync(join(dir, 'virt-controller.log')) ? readFileSync(join(dir, 'virt-controller.log'), 'utf8').trim().split('\n').slice(-5).join('\n') : '';
    await stopAll();
    throw new Error(`KubeVirt's virt-controller (${basename(setup.binary)}, ${lane}) did not start: ${err instanceof Error ? err.message : String(err)}${tail ? `\n${tail}` : ''}`);
  }
}

/** Whether the API server answers the CRD list and the Ingress list itself (the real one does). */
async function servesWhatItNeeds(user: KubeConfig): Promise<boolean> {
  for (const path of ['/apis/apiextensions.k8s.io/v1/customresourcedefinitions?limit=1', '/apis/networking.k8s.io/v1/ingresses?limit=1']) {
    const server = user.getCurrentCluster()?.server ?? '';
    const headers: Record<string, string> = {};
    const token = user.getCurrentUser()?.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    const res = await fetch(`${server}${path}`, { headers }).catch(() => undefined);
    if (res?.status !== 200) return false;
  }
  return true;
}

/** infra/crds/ as CustomResourceDefinition objects (what a list of a real API server shows; the fields virt-controller reads). */
function crdObjects(): unknown[] {
  return loadCrds().map((c) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${c.plural}.${c.group}`, resourceVersion: '1' },
    spec: {
      group: c.group,
      scope: c.namespaced ? 'Namespaced' : 'Cluster',
      names: { kind: c.kind, plural: c.plural, singular: c.singular, listKind: c.listKind, ...(c.shortNames.length ? { shortNames: c.shortNames } : {}) },
      versions: c.versions.map((v) => ({ name: v.name, served: true, storage: v.storage, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } })),
    },
    status: {
      acceptedNames: { kind: c.kind, plural: c.plural },
      storedVersions: c.versions.filter((v) => v.storage).map((v) => v.name),
      conditions: [{ type: 'Established', status: 'True' }],
    },
  }));
}

/** The shim prints `apishim listening on http://HOST:PORT -> …` once it listens. */
function listeningUrl(shim: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('apishim did not say where it listens within 30 s')), 30_000);
    shim.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /apishim listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    shim.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`apishim exited (code ${code})`));
    });
  });
}

/** A kubeconfig for `server` (TLS, `caPem`) authenticating with `token`. */
function tlsKubeconfig(server: string, caPem: string, token: string): string {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sandbox', server, caData: Buffer.from(caPem).toString('base64') }],
    users: [{ name: KUBEVIRT_CONTROLLER_IDENTITY, token }],
    contexts: [{ name: 'sandbox', cluster: 'sandbox', user: KUBEVIRT_CONTROLLER_IDENTITY }],
    currentContext: 'sandbox',
  });
  return kc.exportConfig();
}

/** A TLS listener on loopback piping every connection's bytes to the plain-HTTP `upstream` (see the module comment). */
async function tlsFront(upstream: string): Promise<{ url: string; caPem: string; close: () => Promise<void> }> {
  const ca = await makeCa('bench kubevirt front CA');
  const cert = await issueServingCertificate(ca, '127.0.0.1', { ips: ['127.0.0.1'], dns: ['localhost'] });
  const target = new URL(upstream);
  const open = new Set<{ destroy(): void }>();
  const server = createTlsServer({ key: cert.keyPem, cert: cert.certPem }, (socket) => {
    const up = connect(Number(target.port), target.hostname);
    open.add(socket);
    open.add(up);
    // Small requests and answers go at once (Nagle's wait would add tens of ms per call).
    socket.setNoDelay(true);
    up.setNoDelay(true);
    socket.pipe(up).pipe(socket);
    // Either side closing ends the other: a watch the client drops must not linger upstream.
    const end = () => {
      socket.destroy();
      up.destroy();
      open.delete(socket);
      open.delete(up);
    };
    socket.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `https://127.0.0.1:${port}`, caPem: ca.certPem, close: () => new Promise<void>((r) => {
    server.close(() => r());
    for (const s of open) s.destroy();
  }) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Until the Lease kubevirt/virt-controller names a holder and the VMI controller's loop started. */
async function waitLeading(vc: ChildProcess, user: KubeConfig, logPath: string): Promise<void> {
  const leases = user.makeApiClient(CoordinationV1Api);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited: string | undefined;
  vc.once('exit', (code, signal) => (exited = signal ?? `code ${code}`));
  for (;;) {
    if (exited) throw new Error(`it exited (${exited})`);
    if (Date.now() > deadline) throw new Error(`it did not lead and start its VMI controller within ${START_TIMEOUT_MS / 1000} s`);
    const lease = await leases.readNamespacedLease({ namespace: 'kubevirt', name: 'virt-controller' }).catch(() => undefined);
    if (lease?.spec?.holderIdentity && readFileSync(logPath, 'utf8').includes(VMI_CONTROLLER_STARTED)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  // Its controllers start their workers once their informers synced: a moment after the line.
  await new Promise((r) => setTimeout(r, 2000));
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
}

/**
 * virt-controller's warnings and errors, grouped: its own lines are JSON (`level`, `msg`,
 * `reason`), client-go's and klog's are `E1206 …] message` / `W1206 …] message`.
 */
export function logFindings(text: string): LogFinding[] {
  const counts = new Map<string, LogFinding>();
  const add = (level: string, raw: string) => {
    // Names and numbers vary from line to line (VMI names, resource versions): one group per shape.
    const message = raw.replace(/\d+/g, 'N');
    const key = `${level}\0${message}`;
    const seen = counts.get(key);
    counts.set(key, { level, message, count: (seen?.count ?? 0) + 1 });
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('{')) {
      try {
        const e = JSON.parse(line) as { level?: string; msg?: string; reason?: string };
        if (e.level && e.level !== 'info') add(e.level, `${e.msg ?? ''}${e.reason ? ` (${e.reason})` : ''}`.slice(0, 240));
      } catch {
        // A line cut short by the stop: nothing to group.
      }
      continue;
    }
    const klog = /^([EWF])\d{4} [\d:.]+\s+\d+ [^\]]+\] (.*)$/.exec(line);
    if (klog) add({ E: 'error', W: 'warning', F: 'fatal' }[klog[1] as 'E' | 'W' | 'F'], klog[2]!.slice(0, 240));
  }
  return [...counts.values()].sort((a, b) => b.count - a.count);
}
