/**
 * Test support for the migration function against the real sandbox (API server + simulated
 * scheduler, kubelet and virt-handler on a sped-up clock) through the local runtime (relay,
 * embedded queue and table, the real vmi and migration functions): start/stop, VMI and migration
 * manifests, "wait until", and a log sink that sums the API calls of the migration reconciles.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalRuntime } from '../../../local/runtime.ts';
import { PART_IDENTITY } from '../../../sandbox/real/identities.ts';
import { REAL } from '../../support/lanes.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../../sandbox/sandbox.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../../shared/api/index.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import type { VirtApiClient } from '../../../shared/kube/virt-api.ts';
import type { Logger } from '../../../shared/metrics/log.ts';
import { MIGRATIONS, VMIS } from '../../../shared/api/resources.ts';
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { ClusterConfig } from '../../../shared/config/cluster-config.ts';
import { openSqliteState, type SqliteStateStore } from '../../../shared/state/sqlite-state.ts';
import type { MigrationDeps } from '../../../functions/migration/deps.ts';
import { NO_POLICIES } from '../../../functions/migration/policy-source.ts';

export const NS = 'default';
export const RECONCILER = 'reconciler';
/**
 * The identity the migration controller's requests carry: the runtime's `reconciler` on the
 * emulator; its own (`migration-controller`, held to its own RBAC role) on the real control plane.
 */
export const MIGRATION_IDENTITY: string = REAL ? PART_IDENTITY.migration : RECONCILER;

/** Sums what the instrumented reconciles log (`apiCalls` per reconcile) by controller. */
export class CallLog {
  readonly reconciles = new Map<string, number>();
  readonly apiCalls = new Map<string, number>();
  readonly warnings: string[] = [];
  /** Each migration reconcile that created a pod: its key and what caused it (kind/event and the causing object's UID). */
  readonly podCreations: { key: string; cause: string; causeUid: string }[] = [];

  logger(): Logger {
    const record = (message: string, fields?: Record<string, unknown>) => {
      const controller = typeof fields?.controller === 'string' ? fields.controller : undefined;
      // MIG_DEBUG=1 prints every migration reconcile's log line.
      if (process.env.MIG_DEBUG && controller === 'migration') process.stderr.write(`${message} ${JSON.stringify(fields)}\n`);
      if (controller && (message === 'reconciled' || message === 'reconcile failed')) {
        this.reconciles.set(controller, (this.reconciles.get(controller) ?? 0) + 1);
        this.apiCalls.set(controller, (this.apiCalls.get(controller) ?? 0) + (typeof fields?.apiCalls === 'number' ? fields.apiCalls : 0));
        const created = (fields?.calls as Record<string, number> | undefined)?.['create pods'] ?? 0;
        if (controller === 'migration' && created > 0) this.podCreations.push({ key: String(fields?.key), cause: String(fields?.cause), causeUid: String(fields?.uid) });
      }
    };
    const log: Logger = {
      info: record,
      warn: (m, f) => {
        record(m, f);
        if (m !== 'reconcile failed') this.warnings.push(`${m} ${JSON.stringify(f ?? {})}`);
      },
      error: (m, f) => this.warnings.push(`${m} ${JSON.stringify(f ?? {})}`),
      with: () => log,
    };
    return log;
  }
}

export interface Cluster {
  readonly sandbox: Sandbox;
  readonly runtime: LocalRuntime;
  /** The test's own client (identity `test`). */
  readonly kube: KubeClient;
  readonly calls: CallLog;
  stop(): Promise<void>;
}

/** A sandbox on a sped-up clock and the local runtime running the vmi and migration functions. */
export async function startCluster(opts: SandboxOptions & { speed: number; migrationWorkers?: number }): Promise<Cluster> {
  const sandbox = await startSandbox({ timings: { podStartupMs: 1000, vmiBootMs: 1000, vmiShutdownMs: 1000 }, ...opts });
  const calls = new CallLog();
  const runtime = new LocalRuntime({
    kubeConfig: sandbox.apiServer.kubeConfig(RECONCILER),
    ...(sandbox.controlPlane === 'real' ? { kubeConfigFor: (part: keyof typeof PART_IDENTITY) => sandbox.apiServer.kubeConfig(PART_IDENTITY[part]) } : {}),
    dbPath: ':memory:',
    log: calls.logger(),
    // No node controller: on a heavily sped-up clock a starved event loop can make heartbeats look
    // stale, and its schedulable=false would hold target pods back in tests about migrations.
    workers: { vmi: 4, vm: 1, migration: opts.migrationWorkers ?? 4, node: 0 },
    now: () => sandbox.clock.nowMs(),
    clockSpeed: opts.speed,
  });
  runtime.start();
  return {
    sandbox,
    runtime,
    kube: createKubeClient(sandbox.apiServer.kubeConfig('test')),
    calls,
    async stop() {
      await runtime.stop();
      await sandbox.stop();
    },
  };
}

/**
 * A small VMI with a containerDisk and a masquerade interface on the pod network (virt-api's
 * webhook would otherwise give it the cluster's default, bridge, which is not live-migratable);
 * `nodeSelector` pins it.
 */
export function vmiManifest(name: string, opts: { nodeSelector?: Record<string, string>; labels?: Record<string, string>; cpuModel?: string } = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS, labels: { app: 'migration-test', ...opts.labels } },
    spec: {
      domain: {
        devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', masquerade: {} }] }, resources: { requests: { memory: '128Mi' } },
        ...(opts.cpuModel ? { cpu: { model: opts.cpuModel } } : {}),
      },
      networks: [{ name: 'default', pod: {} }],
      volumes: [{ name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:v1.9.0' } }],
      ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
    },
  };
}

export function migrationManifest(name: string, vmiName: string, annotations?: Record<string, string>): VirtualMachineInstanceMigration {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
    spec: { vmiName },
  };
}

/** Polls `probe` until it returns a value (bounded: the test fails instead of hanging). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** Creates VMIs and waits until each runs on a node; returns their nodes by name. */
export async function runningVmis(c: Cluster, vmis: readonly VirtualMachineInstance[]): Promise<Map<string, string>> {
  await Promise.all(vmis.map((v) => c.kube.create(VMIS, v)));
  const nodes = new Map<string, string>();
  for (const v of vmis) {
    const name = v.metadata?.name ?? '';
    const vmi = await waitFor(`VMI ${name} Running`, async () => {
      const got = await c.kube.get(VMIS, NS, name);
      return got?.status?.phase === 'Running' ? got : undefined;
    });
    nodes.set(name, vmi.status?.nodeName ?? '');
  }
  return nodes;
}

/** Waits until the migration reaches a final phase; returns it. */
export async function finalMigration(c: Cluster, name: string, timeoutMs = 60_000): Promise<VirtualMachineInstanceMigration> {
  return waitFor(`migration ${name} final`, async () => {
    const m = await c.kube.get(MIGRATIONS, NS, name);
    return m?.status?.phase === 'Succeeded' || m?.status?.phase === 'Failed' ? m : undefined;
  }, timeoutMs);
}

/** virt-api for a reconcile that must not call it: any call fails the pass. */
const NO_VIRT_API: VirtApiClient = {
  put: async (target, namespace, name, verb) => {
    throw new Error(`unexpected virt-api call: ${verb} ${target} ${namespace}/${name}`);
  },
};

/**
 * The migration reconcile's deps against `server` as `identity`, on a fresh state store: one pass
 * at a time, no policies; `virtApi` answers the subresource calls (none expected by default).
 */
export function migrationDeps(server: Pick<ApiServer, 'kubeConfig'>, config: ClusterConfig, identity = 'migration-controller', state: SqliteStateStore = openSqliteState(), virtApi: VirtApiClient = NO_VIRT_API): MigrationDeps {
  return {
    kube: createKubeClient(server.kubeConfig(identity)),
    expectations: state.expectations,
    leases: state.leases,
    clusterConfig: async () => config,
    policySource: NO_POLICIES,
    virtApi,
    now: () => Date.now(),
    log: { info: () => undefined, warn: () => undefined },
  };
}
