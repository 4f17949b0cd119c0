/**
 * End-to-end harness for the vertical slice: the sandbox cluster (API server + simulated
 * scheduler, kubelet, virt-handler) and the LocalRuntime (relay → SQLite queue → VMI workers →
 * SQLite table) talking to it over HTTP as identity `runtime`; the test itself acts as `test`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalRuntime, type LocalRuntimeOptions, type RuntimePart } from '../../local/runtime.ts';
import type { Diagnosis } from '../../ops/diagnose/finding.ts';
import { PART_IDENTITY } from '../../sandbox/real/identities.ts';
import { startSandbox, type Sandbox, type SandboxOptions, type SandboxTimings } from '../../sandbox/sandbox.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../shared/api/index.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { KubeTransientError } from '../../shared/kube/errors.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import type { Controller } from '../../shared/queue/message.ts';
import { PODS, VMIS } from '../../shared/api/resources.ts';
import { runCli } from '../support/cli.ts';
import { runKubectl, type KubectlResult } from '../kubectl/support.ts';

export const NS = 'default';
/** The runtime's identity (bearer token): what the API server's counters are read by. */
export const RUNTIME = 'runtime';
/**
 * The identities the runtime's requests carry: `runtime` on the emulator; on the real control
 * plane the relay and each controller have their own (held to their own RBAC role).
 */
export const RUNTIME_IDENTITIES: ReadonlySet<string> = new Set([RUNTIME, ...Object.values(PART_IDENTITY)]);

export interface Slice {
  readonly sandbox: Sandbox;
  readonly rt: LocalRuntime;
  /** The test's own client (identity `test`). */
  readonly kube: KubeClient;
  /** Warnings and errors the runtime logged (shown when an assertion fails). */
  readonly problems: string[];
  stop(): Promise<void>;
}

export interface SliceOptions {
  readonly timings?: SandboxTimings;
  readonly runtime?: Partial<Omit<LocalRuntimeOptions, 'kubeConfig' | 'log'>>;
  /** Start the runtime (relay and workers) at once; default true. */
  readonly start?: boolean;
  /**
   * Sandbox clock speed (simulated ms per real ms); default 1. Above 1 the runtime's controllers
   * read the same sped-up clock (`now`, `clockSpeed`), so backoffs measured on it pass sooner.
   */
  readonly speed?: number;
  /** Number of sandbox nodes; default 2. */
  readonly nodes?: number;
  /** Per-node departures from the shipped node (sandbox options `nodeShapes`). */
  readonly nodeShapes?: SandboxOptions['nodeShapes'];
  /** Run the sandbox's storage agents (provisioner, CSI snapshotter, CDI, export server, backup agent, CAs). */
  readonly storage?: SandboxOptions['storage'];
  /** Write a kubeconfig (into a temporary directory, removed by `stop`) for the real kubectl ({@link kubectlFor}). */
  readonly kubeconfigDir?: boolean;
}

/** A logger that keeps warnings and errors (bounded) and drops info lines. */
function keepingLogger(into: string[], base: Record<string, unknown> = {}): Logger {
  const keep = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    if (into.length < 200) into.push(`${level} ${message} ${JSON.stringify({ ...base, ...fields })}`);
  };
  return { info: () => undefined, warn: keep('warn'), error: keep('error'), with: (f) => keepingLogger(into, { ...base, ...f }) };
}

/** A runtime (not started) on the sandbox, as identity {@link RUNTIME}, keeping its problems in `problems`. */
export function newRuntime(sandbox: Sandbox, problems: string[], opts: SliceOptions['runtime'] = {}): LocalRuntime {
  const speed = sandbox.clock.speed;
  const clock = speed !== 1 ? { now: () => sandbox.clock.nowMs(), clockSpeed: speed } : {};
  const perPart = sandbox.controlPlane === 'real' ? { kubeConfigFor: (part: RuntimePart) => sandbox.apiServer.kubeConfig(PART_IDENTITY[part]) } : {};
  return new LocalRuntime({ kubeConfig: sandbox.apiServer.kubeConfig(RUNTIME), dbPath: ':memory:', log: keepingLogger(problems), ...clock, ...perPart, ...opts });
}

export async function startSlice(opts: SliceOptions = {}): Promise<Slice> {
  const dir = opts.kubeconfigDir ? await mkdtemp(join(tmpdir(), 'vr-e2e-')) : undefined;
  const sandbox = await startSandbox({
    nodes: opts.nodes ?? 2,
    speed: opts.speed ?? 1,
    timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50, ...opts.timings },
    ...(opts.storage !== undefined ? { storage: opts.storage } : {}),
    ...(opts.nodeShapes !== undefined ? { nodeShapes: opts.nodeShapes } : {}),
    ...(dir !== undefined ? { kubeconfigOut: join(dir, 'kubeconfig') } : {}),
  });
  const problems: string[] = [];
  const rt = newRuntime(sandbox, problems, { ...(sandbox.storage ? { virtApiUrl: sandbox.storage.virtApi.url } : {}), ...opts.runtime });
  if (opts.start !== false) rt.start();
  return {
    sandbox,
    rt,
    kube: createKubeClient(sandbox.apiServer.kubeConfig('test')),
    problems,
    async stop() {
      await rt.stop();
      await sandbox.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The real kubectl against a slice started with `kubeconfigDir` (its temporary directory holds kubectl's cache). */
export function kubectlFor(s: Slice): (args: string[], stdin?: string) => Promise<KubectlResult> {
  const kubeconfig = s.sandbox.kubeconfigPath;
  return (args, stdin) => runKubectl({ kubeconfig, dir: dirname(kubeconfig) }, args, stdin);
}

/** A small container-disk VMI, as in examples/vmi-cirros.yaml. */
export function vmiManifest(name: string, spec: Record<string, unknown> = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: {
      // Masquerade on the pod network: the binding a VM needs to live-migrate (KubeVirt's default,
      // bridge, makes virt-handler report InterfaceNotLiveMigratable).
      domain: { resources: { requests: { memory: '128Mi' } }, devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', masquerade: {} }] } },
      networks: [{ name: 'default', pod: {} }],
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.0' } }],
      ...spec,
    },
  } as VirtualMachineInstance;
}

/** A small container-disk VM with the given spec fields (`runStrategy`, `running`, `dataVolumeTemplates`…). */
export function vmManifest(name: string, spec: Partial<VirtualMachine['spec']> = {}): VirtualMachine {
  const vmi = vmiManifest(name);
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: { template: { metadata: { labels: { 'kubevirt.io/vm': name } }, spec: vmi.spec }, ...spec },
  };
}

/**
 * Polls (10 ms, bounded by `tries`, and by `withinMs` of wall time when given — on a loaded machine
 * each try may take far longer than 10 ms) until `cond` holds; fails with `what` and the runtime's
 * problems (a function: what they are when the wait gives up). A read of `cond` that fails
 * transiently (a connection reset by a loaded API server) is no verdict: it is tried again, and
 * named in the failure if the wait gives up.
 */
export async function until(what: string, cond: () => boolean | Promise<boolean>, opts: { tries?: number; withinMs?: number; problems?: readonly string[] | (() => Promise<readonly string[]>) } = {}): Promise<void> {
  const deadline = opts.withinMs !== undefined ? Date.now() + opts.withinMs : Infinity;
  let failed: unknown;
  for (let i = 0; i < (opts.tries ?? 3000) && Date.now() < deadline; i++) {
    try {
      if (await cond()) return;
    } catch (err) {
      if (!(err instanceof KubeTransientError)) throw err;
      failed = err;
    }
    await sleep(10);
  }
  const problems = [...((typeof opts.problems === 'function' ? await opts.problems().catch((e: unknown) => [`(problems not read: ${String(e)})`]) : opts.problems) ?? []), ...(failed ? [`last failed read: ${String(failed)}`] : [])];
  assert.fail(`timed out waiting for: ${what}${problems.length ? `\nruntime problems:\n${problems.slice(-10).join('\n')}` : ''}`);
}

export const HANDED_OFF = new Set(['Scheduled', 'Running', 'Succeeded']);

/** The phase of each named VMI (undefined when gone). */
export async function phases(kube: KubeClient, names: readonly string[]): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  await Promise.all(names.map(async (n) => out.set(n, (await kube.get(VMIS, NS, n))?.status?.phase)));
  return out;
}

/** Names of the launcher pods created for the VMI with this UID. */
export async function launcherPods(kube: KubeClient, uid: string): Promise<string[]> {
  const pods = await kube.list(PODS, NS, { labelSelector: `kubevirt.io/created-by=${uid}` });
  return pods.items.map((p) => p.metadata?.name ?? '');
}

/** The runtime's queues of `controllers` (default the VMI one) are empty: nothing visible, nothing in flight. */
export async function queueIdle(slice: Slice, controllers: readonly Controller[] = ['vmi']): Promise<boolean> {
  for (const c of controllers) {
    const d = await slice.rt.queue.depth(c);
    if (d.visible > 0 || d.inFlight > 0) return false;
  }
  return slice.rt.relay.pending === 0;
}

/** What `virt-reconciler diagnose` answered: exit code, first line, the `--json` answer, the text. */
export interface DiagnoseRun {
  readonly code: number | null;
  readonly first: string;
  readonly json: Diagnosis;
  readonly text: string;
}

/**
 * `diagnose <target>` through the real CLI in a child process, as text and as `--json`, against
 * the queue file `db` and the slice's sandbox (no $KUBECONFIG of the machine's).
 */
export async function diagnoseCli(slice: Slice, db: string, target: string): Promise<DiagnoseRun> {
  const args = ['diagnose', target, '--db', db, '--kubeconfig', slice.sandbox.kubeconfigPath];
  const [text, json] = await Promise.all([runCli(args, { KUBECONFIG: '' }), runCli([...args, '--json'], { KUBECONFIG: '' })]);
  assert.ok(text.code === 0 || text.code === 1, `exit ${text.code}: ${text.stderr}`);
  assert.equal(json.code, text.code, 'same exit code with --json');
  return { code: text.code, first: text.stdout.split('\n')[0] ?? '', json: JSON.parse(json.stdout) as Diagnosis, text: text.stdout };
}
