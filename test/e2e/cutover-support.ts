/**
 * The cutover's end-to-end harness (docs/cutover.md): one sandbox, a "live controller" (a
 * virt-reconciler runtime in lead mode holding virt-controller's Lease, as KubeVirt's
 * virt-controller would), and our runtime beside it under its own identity, in shadow mode or
 * ready to take over.
 */
import type { LocalRuntime } from '../../local/runtime.ts';
import { LocalRuntime as Runtime } from '../../local/runtime.ts';
import type { CutoverOptions } from '../../local/cutover.ts';
import { KUBEVIRT_LEADER_TIMINGS } from '../../shared/cutover/lease.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import { MIGRATIONS, VM_SNAPSHOTS, VMI_REPLICA_SETS, VMIS, VMS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../../shared/metrics/log.ts';
import { NS, vmiManifest, vmManifest } from './support.ts';

/** Our runtime's identity on both lanes: a local-runtime identity other than the live one's. */
export const OURS = 'reconciler';
/** Lease holder names. */
export const LIVE_HOLDER = 'live-virt-controller';
export const OUR_HOLDER = 'virt-reconciler';

/**
 * Leader timings: KubeVirt's own (15 s lease, 10 s renew deadline, 2 s retry). Shorter ones (8/6/1)
 * lapsed on a loaded machine, where one Lease request of a test process took up to 30 s: the live
 * stand-in took the Lease back mid-takeover. A takeover now waits 17 s for the old leader's deadline.
 */
export const LEADER_TIMINGS = KUBEVIRT_LEADER_TIMINGS;

function keepingLogger(into: string[]): Logger {
  const keep = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    if (into.length < 200) into.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  };
  return { info: () => undefined, warn: keep('warn'), error: keep('error'), with: () => keepingLogger(into) };
}

/** Our runtime (not started) on the sandbox, as identity {@link OURS} for every part. */
export function ourRuntime(sandbox: Sandbox, problems: string[], cutover: Omit<CutoverOptions, 'identity'>, extra: { launcherImage?: string } = {}): LocalRuntime {
  const speed = sandbox.clock.speed;
  const clock = speed !== 1 ? { now: () => sandbox.clock.nowMs(), clockSpeed: speed } : {};
  return new Runtime({
    kubeConfig: sandbox.apiServer.kubeConfig(OURS),
    dbPath: ':memory:',
    log: keepingLogger(problems),
    ...clock,
    ...(sandbox.storage ? { virtApiUrl: sandbox.storage.virtApi.url } : {}),
    cutover: { identity: OUR_HOLDER, ...cutover },
    ...extra,
  });
}

/** The mixed workload: 3 VMIs, a running VM, a replica set of 2, a migration of one VMI, a snapshot of the VM. */
export const MIXED = { vmis: ['cut-a', 'cut-b', 'cut-c'], vm: 'cut-vm', rs: 'cut-rs', migration: 'cut-mig', snapshot: 'cut-snap' } as const;

export async function createMixed(kube: KubeClient): Promise<void> {
  for (const n of MIXED.vmis) await kube.create(VMIS, vmiManifest(n));
  await kube.create(VMS, vmManifest(MIXED.vm, { runStrategy: 'Always' } as never));
  const template = vmiManifest('ignored');
  await kube.create(VMI_REPLICA_SETS, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceReplicaSet',
    metadata: { name: MIXED.rs, namespace: NS },
    spec: { replicas: 2, selector: { matchLabels: { app: MIXED.rs } }, template: { metadata: { labels: { app: MIXED.rs } }, spec: template.spec } },
  } as never);
}

export async function migrateAndSnapshot(kube: KubeClient): Promise<void> {
  await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: MIXED.migration, namespace: NS }, spec: { vmiName: MIXED.vmis[0] } } as never);
  await kube.create(VM_SNAPSHOTS, {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshot',
    metadata: { name: MIXED.snapshot, namespace: NS },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: MIXED.vm } },
  } as never);
}
