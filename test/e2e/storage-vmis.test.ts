/**
 * Storage-backed VMIs end to end against the strict node side (issue 31's "Done when",
 * docs/sandbox.md): a claim of each kind — Filesystem and Block, ReadWriteOnce and ReadWriteMany,
 * and a DataVolume — behind a VMI, on the sandbox with its storage side and the local runtime.
 * Each starts (the launcher pod mounts Filesystem claims and attaches Block ones as devices, the
 * kubelet refusing the other way round; the VMI controller writes `persistentVolumeClaimInfo`,
 * without which the strict virt-handler holds a non-root VMI at "missing volume status"); the RWX
 * ones live-migrate; the RWO ones are `LiveMigratable=False` (`DisksNotLiveMigratable`) and virt-api
 * refuses their migration with KubeVirt's reason; and `kubectl drain` treats them as KubeVirt
 * does: the RWX VMI migrates, the RWO one with `LiveMigrateIfPossible` is evicted and its VM starts
 * it again elsewhere, and an RWO one with `LiveMigrate` blocks the drain (the eviction webhook
 * denies it).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { DATA_VOLUMES, MIGRATIONS, NODES, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { KUBECTL, runKubectl } from '../kubectl/support.ts';
import { launcherPods, NS, startSlice, until, vmiManifest, vmManifest, type Slice } from './support.ts';

type Access = 'ReadWriteOnce' | 'ReadWriteMany';
type Mode = 'Filesystem' | 'Block';
interface Kind { vmi: string; claim: string; mode: Mode; access: Access; dataVolume?: true }

const KINDS: Kind[] = [
  { vmi: 'st-fs-rwo', claim: 'c-fs-rwo', mode: 'Filesystem', access: 'ReadWriteOnce' },
  { vmi: 'st-fs-rwx', claim: 'c-fs-rwx', mode: 'Filesystem', access: 'ReadWriteMany' },
  { vmi: 'st-blk-rwo', claim: 'c-blk-rwo', mode: 'Block', access: 'ReadWriteOnce' },
  { vmi: 'st-blk-rwx', claim: 'c-blk-rwx', mode: 'Block', access: 'ReadWriteMany' },
  { vmi: 'st-dv', claim: 'c-dv', mode: 'Filesystem', access: 'ReadWriteOnce', dataVolume: true },
];

const notShared = (claim: string) => `cannot migrate VMI: PVC ${claim} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;

let s: Slice;

/** The claim (or DataVolume) of a kind, bound / succeeded. */
async function provision(k: Kind): Promise<void> {
  const spec = { accessModes: [k.access], volumeMode: k.mode, storageClassName: IMMEDIATE_CLASS, resources: { requests: { storage: '1Gi' } } };
  if (k.dataVolume) {
    await s.kube.create(DATA_VOLUMES, { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: k.claim, namespace: NS }, spec: { source: { blank: {} }, pvc: spec } } as never);
    await until(`DataVolume ${k.claim} Succeeded`, async () => (await s.kube.get(DATA_VOLUMES, NS, k.claim))?.status?.phase === 'Succeeded', { problems: s.problems });
  } else {
    await s.kube.create(PVCS, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: k.claim, namespace: NS }, spec });
  }
  await until(`claim ${k.claim} Bound`, async () => (await s.kube.get(PVCS, NS, k.claim))?.status?.phase === 'Bound', { problems: s.problems });
}

/** A VMI spec whose one disk is the kind's claim (or DataVolume), masquerade on the pod network. */
function storageSpec(k: Kind, extra: Record<string, unknown> = {}): VirtualMachineInstance['spec'] {
  const base = vmiManifest(k.vmi).spec;
  return {
    ...base,
    domain: { ...base.domain, devices: { ...base.domain.devices, disks: [{ name: 'disk', disk: { bus: 'virtio' } }] } },
    volumes: [k.dataVolume ? { name: 'disk', dataVolume: { name: k.claim } } : { name: 'disk', persistentVolumeClaim: { claimName: k.claim } }],
    ...extra,
  } as VirtualMachineInstance['spec'];
}

const condition = (v: VirtualMachineInstance | undefined, type: string) => v?.status?.conditions?.find((c) => c.type === type);

async function running(name: string): Promise<VirtualMachineInstance> {
  await until(`${name} Running with its migratability known`, async () => {
    const v = await s.kube.get(VMIS, NS, name);
    return v?.status?.phase === 'Running' && condition(v, 'LiveMigratable') !== undefined;
  }, { problems: s.problems });
  return (await s.kube.get(VMIS, NS, name))!;
}

async function launcherOf(v: VirtualMachineInstance): Promise<V1Pod> {
  const names = await launcherPods(s.kube, v.metadata?.uid ?? '');
  const pods = await Promise.all(names.map((n) => s.kube.get(PODS, NS, n)));
  const pod = pods.find((p) => p?.spec?.nodeName === v.status?.nodeName && !p?.metadata?.deletionTimestamp);
  assert.ok(pod, `the launcher pod of ${v.metadata?.name} on ${v.status?.nodeName}`);
  return pod;
}

before(async () => {
  s = await startSlice({ speed: 10, nodes: 3, storage: { provisionMs: 100 } });
  for (const k of KINDS) await provision(k);
});
after(async () => {
  await s?.stop();
});

describe('storage-backed VMIs on the strict node side', () => {
  test('each kind starts: Filesystem claims mounted, Block claims as devices, persistentVolumeClaimInfo in the volume status', async () => {
    // arrange
    for (const k of KINDS) await s.kube.create(VMIS, { ...vmiManifest(k.vmi), spec: storageSpec(k) });
    for (const k of KINDS) {
      // act
      const v = await running(k.vmi);
      // assert
      const compute = (await launcherOf(v)).spec?.containers.find((c) => c.name === 'compute');
      const mounted = compute?.volumeMounts?.some((m) => m.name === 'disk') ?? false;
      const device = compute?.volumeDevices?.some((d) => d.name === 'disk') ?? false;
      assert.deepEqual({ mounted, device }, { mounted: k.mode === 'Filesystem', device: k.mode === 'Block' }, `${k.vmi}: a ${k.mode} claim is ${k.mode === 'Block' ? 'a volumeDevice' : 'a volumeMount'}`);
      const info = v.status?.volumeStatus?.find((e) => e.name === 'disk')?.persistentVolumeClaimInfo;
      assert.equal(info?.claimName, k.claim, `${k.vmi}: the claim named in volumeStatus`);
      assert.deepEqual([info?.volumeMode, info?.accessModes], [k.mode, [k.access]], `${k.vmi}: mode and access`);
    }
  });

  test('the ReadWriteMany ones live-migrate to another node', async () => {
    for (const k of KINDS.filter((x) => x.access === 'ReadWriteMany')) {
      // arrange
      const before = await running(k.vmi);
      assert.equal(condition(before, 'LiveMigratable')?.status, 'True', `${k.vmi} LiveMigratable`);
      // act
      await s.kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `mig-${k.vmi}`, namespace: NS }, spec: { vmiName: k.vmi } });
      // assert
      await until(`${k.vmi}'s migration Succeeded`, async () => (await s.kube.get(MIGRATIONS, NS, `mig-${k.vmi}`))?.status?.phase === 'Succeeded', { problems: s.problems });
      const after = await running(k.vmi);
      assert.notEqual(after.status?.nodeName, before.status?.nodeName, `${k.vmi} moved`);
    }
  });

  test('the ReadWriteOnce ones are not migratable, and virt-api refuses their migration with KubeVirt\'s reason', async () => {
    for (const k of KINDS.filter((x) => x.access === 'ReadWriteOnce')) {
      // arrange
      const v = await running(k.vmi);
      const live = condition(v, 'LiveMigratable');
      assert.deepEqual([live?.status, live?.reason, live?.message], ['False', 'DisksNotLiveMigratable', notShared(k.claim)], `${k.vmi} LiveMigratable`);
      // act
      const err = await s.kube
        .create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `mig-${k.vmi}`, namespace: NS }, spec: { vmiName: k.vmi } })
        .then(() => undefined, (e: unknown) => e as Error);
      // assert
      assert.ok(err, `${k.vmi}: the migration was refused`);
      assert.match(err.message, new RegExp(`Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: ${notShared(k.claim).replace(/[()]/g, '\\$&')}`));
    }
  });
});

describe('kubectl drain of a node with both kinds', { skip: KUBECTL ? false : 'no kubectl on this machine' }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vr-storage-drain-'));
    for (const v of KINDS) await s.kube.delete(VMIS, NS, v.vmi).catch(() => undefined);
    await until('the first VMIs gone', async () => (await s.kube.list(VMIS, NS)).items.length === 0, { problems: s.problems });
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const setUnschedulable = (node: string, unschedulable: boolean) => s.kube.patch(NODES, undefined, node, { type: 'merge', body: { spec: { unschedulable } } });
  const drain = (node: string, timeout: string) => runKubectl({ kubeconfig: s.sandbox.kubeconfigPath, dir, timeoutMs: 240_000 }, ['drain', node, '--ignore-daemonsets', '--force', '--delete-emptydir-data', `--timeout=${timeout}`]);
  const rwx = KINDS.find((k) => k.vmi === 'st-fs-rwx')!;
  const rwo = KINDS.find((k) => k.vmi === 'st-blk-rwo')!;
  const pinned = KINDS.find((k) => k.vmi === 'st-fs-rwo')!;

  test('the RWX VMI migrates, the RWO VM (LiveMigrateIfPossible) is evicted and started again elsewhere; an RWO LiveMigrate VMI blocks the drain', async () => {
    // arrange: all three on node01
    const [node01, ...others] = s.sandbox.nodeNames as [string, ...string[]];
    for (const n of others) await setUnschedulable(n, true);
    await s.kube.create(VMIS, { ...vmiManifest(rwx.vmi), spec: storageSpec(rwx, { evictionStrategy: 'LiveMigrate' }) });
    await s.kube.create(VMS, { ...vmManifest(rwo.vmi), spec: { runStrategy: 'Always', template: { metadata: { labels: { 'kubevirt.io/vm': rwo.vmi } }, spec: storageSpec(rwo, { evictionStrategy: 'LiveMigrateIfPossible' }) } } });
    await s.kube.create(VMIS, { ...vmiManifest(pinned.vmi), spec: storageSpec(pinned, { evictionStrategy: 'LiveMigrate' }) });
    for (const k of [rwx, rwo, pinned]) assert.equal((await running(k.vmi)).status?.nodeName, node01);
    const rwoUid = (await s.kube.get(VMIS, NS, rwo.vmi))?.metadata?.uid;
    for (const n of others) await setUnschedulable(n, false);

    // act: a drain that cannot finish while the RWO LiveMigrate VMI is there
    const blocked = await drain(node01, '15s');

    // assert: refused for the pinned VMI with the webhook's reason; the others left the node as KubeVirt's would
    assert.notEqual(blocked.code, 0, 'the drain did not complete');
    assert.match(blocked.stderr + blocked.stdout, new RegExp(`VMI ${pinned.vmi} is configured with an eviction strategy but is not live-migratable`));
    const moved = await s.kube.get(VMIS, NS, rwx.vmi);
    assert.equal(moved?.status?.phase, 'Running');
    assert.notEqual(moved?.status?.nodeName, node01, 'the RWX VMI migrated off');
    await until('the RWO VM started again on another node', async () => {
      const v = await s.kube.get(VMIS, NS, rwo.vmi);
      return v?.metadata?.uid !== rwoUid && v?.status?.phase === 'Running' && v.status.nodeName !== node01;
    }, { problems: s.problems });
    const stuck = await s.kube.get(VMIS, NS, pinned.vmi);
    assert.deepEqual([stuck?.status?.phase, stuck?.status?.nodeName], ['Running', node01], 'the RWO LiveMigrate VMI stays');

    // act: once it is stopped, the drain completes
    await s.kube.delete(VMIS, NS, pinned.vmi);
    const done = await drain(node01, '120s');
    // assert
    assert.equal(done.code, 0, `drain failed:\n${done.stderr.slice(-2000)}`);
  });
});
