/**
 * Test support for the VM reconcile against the sandbox API server: a real client-node facade as
 * identity `vm-controller` (so the server's audit log and counters tell its calls apart from the
 * test's own set-up as `test`), the embedded SQLite state store, a controllable `now`, and
 * "reconcile until settled".
 */
import { after, before, beforeEach } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { virtApiMutatingHook } from '../../../sandbox/kubevirt/mutation-webhook.ts';
import type { KubeVirt, VirtualMachine, VirtualMachineInstance } from '../../../shared/api/index.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { KUBEVIRTS, NAMESPACES, VMIS } from '../../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt, type ClusterConfig } from '../../../shared/config/cluster-config.ts';
import { VMI_FINALIZER } from '../../../shared/api/well-known.ts';
import type { Outcome } from '../../../shared/reconcile/outcome.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';
import type { VmDeps } from '../../../functions/vm/deps.ts';
import { reconcileVm } from '../../../functions/vm/reconcile.ts';

/**
 * The sandbox API server with virt-api's VMI and VM create mutators, as on a KubeVirt cluster:
 * the VM controller's VMIs get their defaults (runtimeUser, hotplug maxima, …) from the webhook,
 * and new VMs their firmware UUID.
 */
export async function startKubevirtApiServer(): Promise<ApiServer> {
  const server = await startApiServer({ port: 0, tooLargeWaitMs: 50 });
  server.admission.onMutateCreate(virtApiMutatingHook());
  return server;
}

/**
 * Makes `spec` the cluster's KubeVirt CR (`kubevirt/kubevirt`, created or replaced) and returns the
 * controller's configuration from that same CR: virt-api's webhooks read the CR in the server, so
 * a test that gives the controller a configuration must give the cluster the same one.
 */
export async function clusterKubeVirt(kube: KubeClient, spec: KubeVirt['spec']): Promise<ClusterConfig> {
  if (!(await kube.get(NAMESPACES, undefined, 'kubevirt'))) await kube.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } });
  const current = await kube.get(KUBEVIRTS, 'kubevirt', 'kubevirt');
  const kv: KubeVirt = { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec };
  const stored = current ? await kube.patch(KUBEVIRTS, 'kubevirt', 'kubevirt', { type: 'json', ops: [{ op: 'replace', path: '/spec', value: spec }] }) : await kube.create(KUBEVIRTS, kv);
  return clusterConfigFromKubeVirt(stored);
}

export const CONTROLLER = 'vm-controller';
export const NS = 'default';

export interface Harness {
  readonly deps: VmDeps;
  /** The test's own client (identity `test`): set-up and playing virt-handler / CDI. */
  readonly kube: KubeClient;
  readonly state: SqliteStateStore;
  /** Moves the reconcile's clock. */
  advance(ms: number): void;
}

export function harness(server: ApiServer, start = Date.parse('2026-03-01T12:00:00Z')): Harness {
  let now = start;
  const clock = () => now;
  const state = openSqliteState();
  const deps: VmDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(now) }),
    expectations: state.expectations,
    now: clock,
    random: () => 0,
    log: { info: () => undefined, warn: () => undefined },
  };
  return { deps, kube: createKubeClient(server.kubeConfig('test')), state, advance: (ms) => (now += ms) };
}

/**
 * One sandbox API server for the calling test file (started before its tests, closed after),
 * and a fresh harness with a cleared audit log before each test: read `ctx.server` / `ctx.h`
 * inside tests.
 */
export function sandboxPerFile(): { readonly server: ApiServer; readonly h: Harness } {
  let server: ApiServer | undefined;
  let h: Harness | undefined;
  before(async () => {
    server = await startKubevirtApiServer();
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(() => {
    h = harness(server!);
    server!.audit.clear();
  });
  return {
    get server() {
      return server!;
    },
    get h() {
      return h!;
    },
  };
}

/**
 * Plays virt-handler and the VMI controller (identity `test`): writes the VMI's status (VMIs have
 * no /status here); a final phase also drops virt-api's `foregroundDeleteVirtualMachine` finalizer,
 * as KubeVirt's VMI controller does once a final VMI has no pod left (these tests run no pods).
 */
export async function setVmiStatus(h: Harness, name: string, status: NonNullable<VirtualMachineInstance['status']>): Promise<void> {
  const final = status.phase === 'Succeeded' || status.phase === 'Failed';
  const finalizers = final ? (await h.kube.get(VMIS, NS, name))?.metadata?.finalizers : undefined;
  const metadata = finalizers?.includes(VMI_FINALIZER) ? { metadata: { finalizers: finalizers.filter((f) => f !== VMI_FINALIZER) } } : {};
  await h.kube.patch(VMIS, NS, name, { type: 'merge', body: { status, ...metadata } });
}

/** `verb resource[/sub] name` for every write the controller made, events as `event Reason`. */
export function actions(server: ApiServer): string[] {
  return server.audit.query({ identity: CONTROLLER }).map((e) => {
    if (e.resource === 'events') return `event ${String((e.object as { reason?: unknown }).reason)}`;
    return `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`;
  });
}

/** Writes only, events left out: what the controller did to objects. */
export function objectActions(server: ApiServer): string[] {
  return actions(server).filter((a) => !a.startsWith('event '));
}

export interface Settled {
  readonly passes: number;
  readonly last: Outcome | 'error';
  readonly errors: string[];
}

/**
 * Reconciles `key` until a pass makes no write and ends `done` (or asks to wait): the serverless
 * counterpart of "the work queue is empty". Thrown errors count as passes (they would be retried).
 * Bounded, so a controller that never settles fails the test instead of hanging it.
 */
export async function reconcileUntilSettled(server: ApiServer, h: Harness, key: string, maxPasses = 12): Promise<Settled> {
  const errors: string[] = [];
  for (let pass = 1; pass <= maxPasses; pass++) {
    const before = server.audit.query({ identity: CONTROLLER }).length;
    let last: Outcome | 'error';
    try {
      last = await reconcileVm(key, h.deps);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
      last = 'error';
    }
    const wrote = server.audit.query({ identity: CONTROLLER }).length > before;
    if (!wrote && last !== 'error') return { passes: pass, last, errors };
  }
  throw new Error(`${key} did not settle in ${maxPasses} passes; errors: ${errors.join(' | ')}`);
}

/** A VM with a containerDisk and the given spec fields. */
export function vmManifest(name: string, spec: Partial<VirtualMachine['spec']> = {}, finalizers?: string[]): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, ...(finalizers ? { finalizers } : {}) },
    spec: {
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name, app: 'demo' }, annotations: { 'example.com/note': 'from-template' } },
        spec: {
          domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
          volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }],
        },
      },
      ...spec,
    },
  };
}
