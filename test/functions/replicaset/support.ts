/**
 * Test support for the replica set reconcile against the sandbox API server: a client-node client
 * as identity `rs-controller` (the audit log tells its calls from the test's own), the embedded
 * SQLite state store, a controllable clock, and "reconcile until settled".
 */
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import { auditActions, auditEvents } from '../../support/audit-actions.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceReplicaSet } from '../../../shared/api/index.ts';
import { VMIS } from '../../../shared/api/resources.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { Outcome } from '../../../shared/reconcile/outcome.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';
import type { RsDeps } from '../../../functions/replicaset/deps.ts';
import { reconcileReplicaSet } from '../../../functions/replicaset/reconcile.ts';

export const CONTROLLER = 'replicaset-controller';
export const NS = 'default';

export interface Harness {
  deps: RsDeps;
  /** The test's own client (identity `test`): set-up, and playing virt-handler. */
  readonly kube: KubeClient;
  readonly state: SqliteStateStore;
  advance(ms: number): void;
}

export function harness(server: ApiServer, overrides: Partial<RsDeps> = {}, start = Date.parse('2026-03-01T12:00:00Z')): Harness {
  let now = start;
  const state = openSqliteState();
  const deps: RsDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(now) }),
    expectations: state.expectations,
    now: () => now,
    log: { info: () => undefined, warn: () => undefined },
    ...overrides,
  };
  return { deps, kube: createKubeClient(server.kubeConfig('test')), state, advance: (ms) => (now += ms) };
}

/** `verb resource[/sub] name` for every write the controller made; events as `event Reason`. */
export const actions = (server: ApiServer): string[] => auditActions(server, CONTROLLER);

/** The controller's events, `Type Reason: message`. */
export const events = (server: ApiServer): string[] => auditEvents(server, CONTROLLER);

export interface Settled {
  readonly passes: number;
  readonly last: Outcome | 'error';
  readonly errors: string[];
}

/** Reconciles until a pass writes nothing and ends without an error (bounded). */
export async function reconcileUntilSettled(server: ApiServer, h: Harness, key: string, maxPasses = 12): Promise<Settled> {
  const errors: string[] = [];
  for (let pass = 1; pass <= maxPasses; pass++) {
    const before = actions(server).length;
    let last: Outcome | 'error';
    try {
      last = await reconcileReplicaSet(key, h.deps);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
      last = 'error';
    }
    if (actions(server).length === before && last !== 'error') return { passes: pass, last, errors };
  }
  throw new Error(`${key} did not settle in ${maxPasses} passes; errors: ${errors.join(' | ')}`);
}

/** A replica set with a labelled containerDisk template, annotated as KubeVirt would have it. */
export function rsManifest(name: string, spec: Partial<VirtualMachineInstanceReplicaSet['spec']> = {}, annotated = true): VirtualMachineInstanceReplicaSet {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceReplicaSet',
    metadata: {
      name,
      namespace: NS,
      ...(annotated ? { annotations: { 'kubevirt.io/latest-observed-api-version': 'v1', 'kubevirt.io/storage-observed-api-version': 'v1' } } : {}),
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { rs: name } },
      template: {
        metadata: { labels: { rs: name, app: 'demo' }, annotations: { 'example.com/note': 'from-template' } },
        spec: {
          domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
          volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }],
        },
      },
      ...spec,
    },
  };
}

/** A standalone VMI with `labels` (an orphan unless `owners` are given). */
export function vmiManifest(name: string, labels: Record<string, string>, owners?: NonNullable<VirtualMachineInstance['metadata']>['ownerReferences']): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS, labels, ...(owners ? { ownerReferences: owners } : {}) },
    spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } } },
  };
}

/** The VMIs whose controller is the replica set `name`, by name. */
export async function ownedVmis(kube: KubeClient, rsUid: string | undefined): Promise<VirtualMachineInstance[]> {
  const items = (await kube.list(VMIS, NS)).items;
  return items.filter((v) => v.metadata?.ownerReferences?.some((r) => r.controller && r.uid === rsUid)).sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}
