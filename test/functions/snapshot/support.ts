/**
 * Test support for the snapshot reconcile against the sandbox API server: the controller's client
 * as identity `snapshot-controller` (the audit log tells its calls from the test's set-up as
 * `test`), a virt-api that plays the guest agent on the VMI (freeze → `fsFreezeStatus=frozen`,
 * unfreeze → cleared; failures injectable), a controllable clock, the storage the tests need
 * (a StorageClass and its VolumeSnapshotClass, Bound claims), and "reconcile until settled".
 */
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import { CONTROLLER_REVISIONS, PVCS, STORAGE_CLASSES, VM_SNAPSHOTS, VMIS, VMS, VOLUME_SNAPSHOT_CLASSES, VOLUME_SNAPSHOTS } from '../../../shared/api/resources.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import type { VirtualMachineSnapshot } from '../../../shared/api/snapshot.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { VirtApiError, type VirtApiClient } from '../../../shared/kube/virt-api.ts';
import { MetricsRegistry } from '../../../shared/metrics/registry.ts';
import type { Outcome } from '../../../shared/reconcile/outcome.ts';
import type { SnapshotDeps } from '../../../functions/snapshot/deps.ts';
import { reconcileSnapshot } from '../../../functions/snapshot/reconcile.ts';

export const CONTROLLER = 'snapshot-controller';
export const NS = 'default';
export const DRIVER = 'csi.test.example';
export const SC = 'test-sc';
export const VSC = 'test-snapclass';

/** A virt-api playing the guest agent on the VMI, with injectable refusals. */
export interface FakeVirtApi extends VirtApiClient {
  readonly calls: string[];
  failFreeze?: string | undefined;
  failUnfreeze?: string | undefined;
}

export interface Harness {
  readonly deps: SnapshotDeps;
  /** The test's own client (identity `test`). */
  readonly kube: KubeClient;
  readonly virtApi: FakeVirtApi;
  readonly metrics: MetricsRegistry;
  advance(ms: number): void;
}

export function harness(server: ApiServer): Harness {
  let now = Date.now();
  const kube = createKubeClient(server.kubeConfig('test'));
  const virtApi: FakeVirtApi = {
    calls: [],
    async put(target, namespace, name, verb, body) {
      virtApi.calls.push(`${verb} ${name}${body && Object.keys(body as object).length > 0 ? ` ${JSON.stringify(body)}` : ''}`);
      const failure = verb === 'freeze' ? virtApi.failFreeze : verb === 'unfreeze' ? virtApi.failUnfreeze : undefined;
      if (failure) throw new VirtApiError(500, failure);
      if (target === 'virtualmachineinstances') await kube.patch(VMIS, namespace, name, { type: 'merge', body: { status: { fsFreezeStatus: verb === 'freeze' ? 'frozen' : null } } });
    },
  };
  const metrics = new MetricsRegistry();
  const deps: SnapshotDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(now) }),
    virtApi,
    now: () => now,
    log: { info: () => undefined, warn: () => undefined },
    metrics,
  };
  return { deps, kube, virtApi, metrics, advance: (ms) => (now += ms) };
}

/** `verb resource[/sub] name` for every write the controller made, events as `event Reason`. */
export function actions(server: ApiServer): string[] {
  return server.audit.query({ identity: CONTROLLER }).map((e) => {
    if (e.resource === 'events') return `event ${String((e.object as { reason?: unknown }).reason)}`;
    return `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`;
  });
}

export interface Settled {
  readonly passes: number;
  readonly last: Outcome | 'error';
  readonly outcomes: (Outcome | string)[];
}

/** One pass; a thrown error is its message. */
export async function pass(h: Harness, key: string): Promise<Outcome | string> {
  try {
    return await reconcileSnapshot(key, h.deps);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Reconciles `key` until a pass writes nothing (the work queue would be empty, or only a timer
 * left). Between passes `between` may play an agent (the CSI snapshotter). Bounded.
 */
export async function settle(server: ApiServer, h: Harness, key: string, between: () => Promise<void> = async () => undefined, maxPasses = 15): Promise<Settled> {
  const outcomes: (Outcome | string)[] = [];
  for (let n = 1; n <= maxPasses; n++) {
    const before = server.audit.query({ identity: CONTROLLER }).length;
    const last = await pass(h, key);
    outcomes.push(last);
    await between();
    const wrote = server.audit.query({ identity: CONTROLLER }).length > before;
    if (!wrote && typeof last !== 'string') return { passes: n, last, outcomes };
  }
  throw new Error(`${key} did not settle in ${maxPasses} passes: ${JSON.stringify(outcomes)}`);
}

/** The CSI snapshotter's part: every VolumeSnapshot of the namespace cut and ready. */
export async function csiReady(h: Harness, at = new Date().toISOString()): Promise<void> {
  for (const vs of (await h.kube.list(VOLUME_SNAPSHOTS, NS)).items) {
    if (vs.status?.readyToUse) continue;
    await h.kube.patch(VOLUME_SNAPSHOTS, NS, vs.metadata?.name ?? '', { type: 'merge', body: { status: { creationTime: at, readyToUse: true, restoreSize: '1Gi' } } }, { subresource: 'status' });
  }
}

/** The StorageClass and its VolumeSnapshotClass (kept if they exist). */
export async function storage(h: Harness, withSnapshotClass = true): Promise<void> {
  const keep = async (f: () => Promise<unknown>) => {
    try {
      await f();
    } catch (err) {
      if (!/already exists/i.test(String((err as Error).message))) throw err;
    }
  };
  await keep(() => h.kube.create(STORAGE_CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: SC }, provisioner: DRIVER, volumeBindingMode: 'Immediate' } as never));
  if (withSnapshotClass) await keep(() => h.kube.create(VOLUME_SNAPSHOT_CLASSES, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: VSC }, driver: DRIVER, deletionPolicy: 'Delete' } as never));
}

/** A claim of class {@link SC}, Bound unless told otherwise. */
export async function claim(h: Harness, name: string, phase = 'Bound'): Promise<void> {
  await h.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: SC } });
  await h.kube.patch(PVCS, NS, name, { type: 'merge', body: { status: { phase } } }, { subresource: 'status' });
}

/** A stopped VM with a containerDisk and one PVC volume `disk` on claim `<name>-disk`. */
export function vmManifest(name: string): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      runStrategy: 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name } },
        spec: {
          domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }, { name: 'disk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
          volumes: [
            { name: 'root', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } },
            { name: 'disk', persistentVolumeClaim: { claimName: `${name}-disk` } },
          ],
        },
      },
    },
  };
}

/** The VM (with its Bound claim), and — `online` — a Running VMI started from a start revision, with a guest agent unless `agent: false`. */
export async function sourceVm(h: Harness, name: string, opts: { online?: boolean; agent?: boolean; claimPhase?: string } = {}): Promise<VirtualMachine> {
  await claim(h, `${name}-disk`, opts.claimPhase);
  const vm = await h.kube.create(VMS, vmManifest(name));
  await h.kube.patch(VMS, NS, name, { type: 'merge', body: { status: { printableStatus: opts.online ? 'Running' : 'Stopped' } } }, { subresource: 'status' });
  if (opts.online) {
    const revision = `revision-start-vm-${vm.metadata?.uid ?? ''}-1`;
    await h.kube.create(CONTROLLER_REVISIONS, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: revision, namespace: NS }, data: { spec: vm.spec }, revision: 1 });
    await h.kube.create(VMIS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      metadata: { name, namespace: NS },
      spec: vm.spec.template.spec!,
      status: {
        phase: 'Running',
        virtualMachineRevisionName: revision,
        conditions: [{ type: 'Ready', status: 'True' }, ...(opts.agent === false ? [] : [{ type: 'AgentConnected', status: 'True' }])],
      },
    } as never);
  }
  return vm;
}

/** A VirtualMachineSnapshot of VM `vm`. */
export async function snapshotOf(h: Harness, name: string, vm: string, spec: Partial<NonNullable<VirtualMachineSnapshot['spec']>> = {}): Promise<VirtualMachineSnapshot> {
  return h.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name, namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm }, ...spec } });
}

/** Type, status and reason of each condition, in order. */
export const conditions = (s: { status?: { conditions?: { type: string; status: string; reason?: string }[] } } | undefined) => (s?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}`);
