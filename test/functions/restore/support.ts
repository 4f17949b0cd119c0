/**
 * Test support for the restore reconcile against the sandbox API server: the controller's client
 * as identity `restore-controller` (the audit log tells its calls from the test's set-up), a
 * virt-api that records `stop` calls (failures injectable), a controllable clock, and the objects a
 * restore starts from, made by hand as the snapshot controller and the CSI snapshotter would leave
 * them: a VM on a Bound claim, a ready VirtualMachineSnapshot, its content and VolumeSnapshot.
 */
import type { ApiServer } from '../../../sandbox/apiserver/index.ts';
import { PVCS, STORAGE_CLASSES, VM_RESTORES, VM_SNAPSHOT_CONTENTS, VM_SNAPSHOTS, VMIS, VMS, VOLUME_SNAPSHOTS } from '../../../shared/api/resources.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import type { VirtualMachineRestore } from '../../../shared/api/snapshot.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { VirtApiError, type VirtApiClient } from '../../../shared/kube/virt-api.ts';
import type { Outcome } from '../../../shared/reconcile/outcome.ts';
import type { RestoreDeps } from '../../../functions/restore/deps.ts';
import { reconcileRestore } from '../../../functions/restore/reconcile.ts';

export const CONTROLLER = 'restore-controller';
export const NS = 'default';
export const SC = 'test-sc';
export const WFFC_SC = 'test-wffc';

/** A virt-api that records calls, with an injectable refusal of `stop`. */
export interface FakeVirtApi extends VirtApiClient {
  readonly calls: string[];
  failStop?: string | undefined;
}

export interface Harness {
  readonly deps: RestoreDeps;
  /** The test's own client (identity `test`). */
  readonly kube: KubeClient;
  readonly virtApi: FakeVirtApi;
  advance(ms: number): void;
}

export function harness(server: ApiServer): Harness {
  let now = Date.now();
  const kube = createKubeClient(server.kubeConfig('test'));
  const virtApi: FakeVirtApi = {
    calls: [],
    async put(_target, _namespace, name, verb) {
      virtApi.calls.push(`${verb} ${name}`);
      if (verb === 'stop' && virtApi.failStop) throw new VirtApiError(409, virtApi.failStop);
    },
  };
  const deps: RestoreDeps = {
    kube: createKubeClient(server.kubeConfig(CONTROLLER), { now: () => new Date(now) }),
    virtApi,
    now: () => now,
    log: { info: () => undefined, warn: () => undefined },
  };
  return { deps, kube, virtApi, advance: (ms) => (now += ms) };
}

/** `verb resource[/sub] name` for every write the controller made, events as `event Reason`. */
export function actions(server: ApiServer): string[] {
  return server.audit.query({ identity: CONTROLLER }).map((e) => {
    if (e.resource === 'events') return `event ${String((e.object as { reason?: unknown }).reason)}`;
    return `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`;
  });
}

/** One pass; a thrown error is its message. */
export async function pass(h: Harness, key: string): Promise<Outcome | string> {
  try {
    return await reconcileRestore(key, h.deps);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Reconciles `key` until a pass writes nothing but events. Between passes `between` may play an agent (the
 * PV binder, CDI). Bounded.
 */
export async function settle(server: ApiServer, h: Harness, key: string, between: () => Promise<void> = async () => undefined, maxPasses = 15): Promise<(Outcome | string)[]> {
  const outcomes: (Outcome | string)[] = [];
  // Events do not count: KubeVirt records the waiting and error events on every pass, and a
  // recorded event wakes no restore.
  const writes = () => server.audit.query({ identity: CONTROLLER }).filter((e) => e.resource !== 'events').length;
  for (let n = 1; n <= maxPasses; n++) {
    const before = writes();
    const last = await pass(h, key);
    outcomes.push(last);
    await between();
    if (writes() === before && typeof last !== 'string') return outcomes;
  }
  throw new Error(`${key} did not settle in ${maxPasses} passes: ${JSON.stringify(outcomes)}`);
}

const keep = async (f: () => Promise<unknown>) => {
  try {
    await f();
  } catch (err) {
    if (!/already exists/i.test(String((err as Error).message))) throw err;
  }
};

/** An Immediate and a WaitForFirstConsumer StorageClass (kept if they exist). */
export async function storage(h: Harness): Promise<void> {
  for (const [name, mode] of [
    [SC, 'Immediate'],
    [WFFC_SC, 'WaitForFirstConsumer'],
  ] as const) {
    await keep(() => h.kube.create(STORAGE_CLASSES, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'csi.test.example', volumeBindingMode: mode } as never));
  }
}

/** The PV binder's part: every claim of the namespace that is not Bound becomes Bound. */
export async function bindAll(h: Harness): Promise<void> {
  for (const pvc of (await h.kube.list(PVCS, NS)).items) {
    if (pvc.status?.phase === 'Bound') continue;
    await h.kube.patch(PVCS, NS, pvc.metadata?.name ?? '', { type: 'merge', body: { status: { phase: 'Bound' } } }, { subresource: 'status' });
  }
}

/** A claim of class `sc`, in `phase`. */
export async function claim(h: Harness, name: string, opts: { phase?: string; sc?: string; owner?: VirtualMachine; labels?: Record<string, string>; annotations?: Record<string, string> } = {}): Promise<void> {
  const ownerReferences = opts.owner ? [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: opts.owner.metadata?.name ?? '', uid: opts.owner.metadata?.uid ?? '', controller: true }] : undefined;
  await h.kube.create(PVCS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, ...(opts.labels ? { labels: opts.labels } : {}), ...(opts.annotations ? { annotations: opts.annotations } : {}), ...(ownerReferences ? { ownerReferences } : {}) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: opts.sc ?? SC },
  });
  await h.kube.patch(PVCS, NS, name, { type: 'merge', body: { status: { phase: opts.phase ?? 'Bound' } } }, { subresource: 'status' });
}

/** A stopped VM with a containerDisk and one PVC volume `disk` on claim `<name>-disk`. */
export function vmManifest(name: string, runStrategy = 'Halted'): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      runStrategy,
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

export interface Source {
  readonly vm: VirtualMachine;
  readonly snapshot: string;
  readonly content: string;
  readonly volumeSnapshot: string;
}

/**
 * The VM `name` on its Bound claim (owned by the VM when `ownedClaim`), and a ready snapshot
 * `<name>-snap` of it as the snapshot controller and CSI snapshotter leave one: the content
 * recording the VM and its claim, the VolumeSnapshot ready with `restoreSize`.
 */
export async function source(h: Harness, name: string, opts: { ownedClaim?: boolean; restoreSize?: string; snapshotReady?: boolean; contentReady?: boolean; backend?: boolean } = {}): Promise<Source> {
  const manifest = vmManifest(name);
  // a persistent TPM keeps its state in the backend claim `<name>-backend` (persistent-state-for=<name>)
  if (opts.backend) manifest.spec.template.spec!.domain.devices.tpm = { persistent: true };
  const vm = await h.kube.create(VMS, manifest);
  await claim(h, `${name}-disk`, { ...(opts.ownedClaim ? { owner: vm } : {}), labels: { app: name, 'persistent-state-for': 'x' }, annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'cdi.kubevirt.io/storage.contentType': 'kubevirt', keep: 'me' } });
  const pvc = await h.kube.get(PVCS, NS, `${name}-disk`);
  const snapshot = `${name}-snap`;
  const content = `vmsnapshot-content-${name}`;
  const volumeSnapshot = `vmsnapshot-${name}-volume-disk`;
  await h.kube.create(VOLUME_SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: volumeSnapshot, namespace: NS }, spec: { source: { persistentVolumeClaimName: `${name}-disk` } } } as never);
  await h.kube.patch(VOLUME_SNAPSHOTS, NS, volumeSnapshot, { type: 'merge', body: { status: { readyToUse: true, creationTime: new Date().toISOString(), restoreSize: opts.restoreSize ?? '1Gi' } } }, { subresource: 'status' });
  const s = await h.kube.create(VM_SNAPSHOTS, { apiVersion: 'snapshot.kubevirt.io/v1beta1', kind: 'VirtualMachineSnapshot', metadata: { name: snapshot, namespace: NS }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name } } });
  await h.kube.create(VM_SNAPSHOT_CONTENTS, {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshotContent',
    metadata: { name: content, namespace: NS },
    spec: {
      source: { virtualMachine: { metadata: { name, namespace: NS, uid: vm.metadata?.uid, labels: vm.metadata?.labels }, spec: vm.spec } },
      virtualMachineSnapshotName: snapshot,
      volumeBackups: [{ volumeName: 'disk', persistentVolumeClaim: { metadata: pvc?.metadata ?? {}, spec: pvc?.spec ?? {} }, volumeSnapshotName: volumeSnapshot }, ...(await backendBackup(h, name, opts.backend))],
    },
  } as never);
  await h.kube.patch(VM_SNAPSHOT_CONTENTS, NS, content, { type: 'merge', body: { status: { readyToUse: opts.contentReady ?? true, creationTime: new Date().toISOString() } } }, { subresource: 'status' });
  await h.kube.patch(
    VM_SNAPSHOTS,
    NS,
    snapshot,
    { type: 'merge', body: { status: { phase: 'Succeeded', readyToUse: opts.snapshotReady ?? true, sourceUID: vm.metadata?.uid, virtualMachineSnapshotContentName: content, creationTime: s.metadata?.creationTimestamp } } },
    { subresource: 'status' },
  );
  return { vm, snapshot, content, volumeSnapshot };
}

/** The backend claim `<name>-backend`, its ready VolumeSnapshot, and its volume backup (none unless `backend`). */
async function backendBackup(h: Harness, name: string, backend: boolean | undefined): Promise<unknown[]> {
  if (!backend) return [];
  await claim(h, `${name}-backend`, { labels: { 'persistent-state-for': name } });
  const pvc = await h.kube.get(PVCS, NS, `${name}-backend`);
  const vs = `vmsnapshot-${name}-volume-backend`;
  await h.kube.create(VOLUME_SNAPSHOTS, { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: vs, namespace: NS }, spec: { source: { persistentVolumeClaimName: `${name}-backend` } } } as never);
  await h.kube.patch(VOLUME_SNAPSHOTS, NS, vs, { type: 'merge', body: { status: { readyToUse: true, creationTime: new Date().toISOString(), restoreSize: '10Mi' } } }, { subresource: 'status' });
  return [{ volumeName: `persistent-state-for-${name}`, persistentVolumeClaim: { metadata: pvc?.metadata ?? {}, spec: pvc?.spec ?? {} }, volumeSnapshotName: vs }];
}

/** A Running VMI for the VM `name` (the target is not Ready while it exists). */
export async function runningVmi(h: Harness, name: string): Promise<void> {
  const vm = (await h.kube.get(VMS, NS, name)) as VirtualMachine;
  await h.kube.create(VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS }, spec: vm.spec.template.spec!, status: { phase: 'Running' } } as never);
}

/** A VirtualMachineRestore of `snapshot` into the VM `target`. */
export async function restoreOf(h: Harness, name: string, snapshot: string, target: string, spec: Partial<NonNullable<VirtualMachineRestore['spec']>> = {}): Promise<VirtualMachineRestore> {
  return h.kube.create(VM_RESTORES, {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineRestore',
    metadata: { name, namespace: NS },
    spec: { target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: target }, virtualMachineSnapshotName: snapshot, ...spec },
  });
}

/** Type, status and reason of each condition, in order. */
export const conditions = (s: { status?: { conditions?: { type: string; status: string; reason?: string }[] } } | undefined) => (s?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}`);
