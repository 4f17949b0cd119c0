/**
 * Test support for the node reconcile against the sandbox API server: a client as identity
 * `node-controller` (the audit log tells its calls from the test's set-up as `test`), the embedded
 * SQLite state (the re-check's lease), and a clock the test moves.
 */
import type { V1DaemonSet, V1Node, V1Pod } from '@kubernetes/client-node';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { KubeVirt, VirtualMachineInstance } from '../../../shared/api/index.ts';
import { clusterConfigFromKubeVirt } from '../../../shared/config/cluster-config.ts';
import { DAEMON_SETS, NODES, PODS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { openSqliteState } from '../../../shared/state/sqlite-state.ts';
import type { NodeDeps } from '../../../functions/node/deps.ts';

export const CONTROLLER = 'node-controller';
export const NOW = Date.parse('2026-12-01T12:00:00Z');

export interface Harness {
  readonly deps: NodeDeps;
  readonly kube: KubeClient;
  advance(ms: number): void;
}

/** `kubevirt` is the KubeVirt CR the cluster config is read from (none: the defaults). */
export function harness(server: ApiServer, kubevirt?: KubeVirt): Harness {
  let now = NOW;
  const state = openSqliteState();
  const deps: NodeDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(now) }),
    leases: state.leases,
    now: () => now,
    clusterConfig: async () => clusterConfigFromKubeVirt(kubevirt),
    log: { info: () => undefined, warn: () => undefined },
  };
  return { deps, kube: createKubeClient(server.kubeConfig('test')), advance: (ms) => (now += ms) };
}

/** `verb resource[/sub] name` of each controller write; events as `event Type Reason kind/name`. */
export function actions(server: ApiServer): string[] {
  return server.audit.query({ identity: CONTROLLER }).map((e) => {
    if (e.resource === 'events') {
      const ev = e.object as { type?: string; reason?: string; involvedObject?: { kind?: string; name?: string } };
      return `event ${ev.type} ${ev.reason} ${ev.involvedObject?.kind}/${ev.involvedObject?.name}`;
    }
    return `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`;
  });
}

export async function createNode(kube: KubeClient, name: string, opts: { heartbeatAgoMs?: number; schedulable?: string } = {}): Promise<void> {
  const annotations = opts.heartbeatAgoMs === undefined ? {} : { 'kubevirt.io/heartbeat': new Date(NOW - opts.heartbeatAgoMs).toISOString().replace(/\.\d+Z$/, 'Z') };
  const labels = opts.schedulable === undefined ? {} : { 'kubevirt.io/schedulable': opts.schedulable };
  await kube.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name, annotations, labels } } as V1Node);
}

export async function createVmi(kube: KubeClient, name: string, nodeName: string, phase: string): Promise<VirtualMachineInstance> {
  const vmi = await kube.create(VMIS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default', labels: { 'kubevirt.io/nodeName': nodeName } },
    spec: { domain: { devices: {} } },
  } as VirtualMachineInstance);
  return kube.patch(VMIS, 'default', name, { type: 'merge', body: { status: { phase, nodeName } } });
}

/** The VMI's launcher pod on `nodeName`, in the given pod phase. */
export async function createLauncher(kube: KubeClient, vmi: VirtualMachineInstance, nodeName: string, phase = 'Running'): Promise<void> {
  const name = `virt-launcher-${vmi.metadata?.name}`;
  await kube.create(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: vmi.metadata?.name ?? '', uid: vmi.metadata?.uid ?? '', controller: true }] },
    spec: { nodeName, containers: [{ name: 'compute', image: 'virt-launcher' }] },
  } as V1Pod);
  await kube.patch(PODS, 'default', name, { type: 'merge', body: { status: { phase } } }, { subresource: 'status' });
}

/** A virt-handler DaemonSet (name `name`) with the given counts. */
export async function createHandlerSet(kube: KubeClient, name: string, counts: { desired: number; scheduled: number; ready: number }): Promise<void> {
  await kube.create(DAEMON_SETS, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'kubevirt', labels: { 'kubevirt.io': 'virt-handler' } },
    spec: { selector: { matchLabels: { 'kubevirt.io': name } }, template: { metadata: { labels: { 'kubevirt.io': name } }, spec: { containers: [{ name: 'h', image: 'h' }] } } },
  } as V1DaemonSet);
  await kube.patch(DAEMON_SETS, 'kubevirt', name, { type: 'merge', body: { status: { desiredNumberScheduled: counts.desired, currentNumberScheduled: counts.scheduled, numberReady: counts.ready, numberMisscheduled: 0 } } }, { subresource: 'status' });
}

/** A virt-handler pod on `nodeName`. */
export async function createHandlerPod(kube: KubeClient, nodeName: string): Promise<void> {
  await kube.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `virt-handler-${nodeName}`, namespace: 'kubevirt', labels: { 'kubevirt.io': 'virt-handler' } }, spec: { nodeName, containers: [{ name: 'h', image: 'h' }] } } as V1Pod);
}
