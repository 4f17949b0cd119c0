/**
 * The VMI controller's hotplug decisions, table-driven against reference-vm-vmi-depth §3.1 (the
 * hotplug set, ready volumes, the attachment pod plan and its cleanup) and §3.2 (the hotplug
 * entries of status.volumeStatus, their phases, reasons, messages and events).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { DataVolume, VirtualMachineInstance, VolumeStatus } from '../../../shared/api/index.ts';
import { planAttachmentPods, podMatchesVolumes, orphanedAttachmentPods } from '../../../functions/vmi/hotplug/attachment-pods.ts';
import { vmiVolumeStatus, volumeStatusEvents } from '../../../functions/vmi/hotplug/volume-status.ts';
import { hotplugVolumes, readyVolumes } from '../../../functions/vmi/hotplug/volumes.ts';

function vmi(volumes: Record<string, unknown>[], status: VolumeStatus[] = [], extra: Partial<VirtualMachineInstance['spec']> = {}): VirtualMachineInstance {
  return {
    metadata: { name: 'a', namespace: 'ns', uid: 'vmi-uid' },
    spec: { domain: { devices: {} }, volumes: [{ name: 'root', containerDisk: { image: 'x' } }, ...volumes] as never, ...extra },
    status: { phase: 'Running', volumeStatus: status, selinuxContext: 'none' },
  };
}

const LAUNCHER: V1Pod = {
  metadata: { name: 'virt-launcher-a-x', namespace: 'ns', uid: 'launcher-uid', labels: { 'kubevirt.io': 'virt-launcher' } },
  spec: { nodeName: 'node01', containers: [{ name: 'compute' }], volumes: [{ name: 'root', emptyDir: {} }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'compute', ready: true, state: { running: {} } } as never] },
};

function attachment(name: string, volumes: string[], opts: { phase?: string; deleting?: boolean; ready?: boolean; created?: string; trigger?: boolean } = {}): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `${name}-uid`,
      creationTimestamp: new Date(opts.created ?? '2026-12-01T10:00:00Z'),
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'virt-launcher-a-x', uid: 'launcher-uid', controller: true }],
      ...(opts.trigger ? { annotations: { 'kubevirt.io/ephemeral-provisioning': 'true' } } : {}),
      ...(opts.deleting ? { deletionTimestamp: new Date('2026-12-01T10:05:00Z') } : {}),
    },
    spec: {
      containers: [{ name: 'hotplug-disk' }],
      volumes: [
        { name: 'hotplug-disks', emptyDir: {} },
        ...volumes.map((v) => ({ name: v, persistentVolumeClaim: { claimName: `${v}-claim` } })),
        { name: 'kube-api-access-abcde', projected: { sources: [] } },
      ],
    },
    status: { phase: opts.phase ?? 'Running', containerStatuses: [{ name: 'hotplug-disk', ready: opts.ready ?? true } as never] },
  };
}

const hp = (name: string) => ({ name, persistentVolumeClaim: { claimName: `${name}-claim`, hotpluggable: true } });
const pvc = (name: string, phase = 'Bound', owner?: string): V1PersistentVolumeClaim => ({
  metadata: { name, uid: `${name}-uid`, ...(owner ? { ownerReferences: [{ apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: owner, uid: 'dv', controller: true }] } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  status: { phase, capacity: { storage: '1Gi' } },
});
const claims = (...names: string[]) => ({ pvcs: new Map(names.map((n) => [n, pvc(n)])), dataVolumes: new Map<string, DataVolume>() });

describe('the hotplug volume set (GetHotplugVolumes)', () => {
  test('table: PVC, DataVolume and MemoryDump volumes the launcher pod lacks, hotpluggable or not, then utility volumes', () => {
    const cases: { name: string; volumes: Record<string, unknown>[]; utility?: { name: string; claimName: string }[]; want: string[] }[] = [
      { name: 'none', volumes: [], want: [] },
      { name: 'a hotpluggable PVC', volumes: [hp('x')], want: ['x'] },
      { name: 'a PVC without the flag counts too', volumes: [{ name: 'y', persistentVolumeClaim: { claimName: 'y' } }], want: ['y'] },
      { name: 'a DataVolume and a memory dump', volumes: [{ name: 'd', dataVolume: { name: 'd' } }, { name: 'm', memoryDump: { claimName: 'm' } }], want: ['d', 'm'] },
      { name: 'a volume of the launcher pod is not one', volumes: [{ name: 'root', persistentVolumeClaim: { claimName: 'r' } }], want: [] },
      { name: 'a utility volume', volumes: [], utility: [{ name: 'u', claimName: 'u-claim' }], want: ['u'] },
    ];
    for (const c of cases) {
      // arrange
      const v = vmi(c.volumes, [], c.utility ? { utilityVolumes: c.utility } : {});
      if (c.name.startsWith('a volume of the launcher')) v.spec.volumes = c.volumes as never;
      // act
      const got = hotplugVolumes(v, LAUNCHER).map((h) => h.name);
      // assert
      assert.deepEqual(got, c.want, c.name);
    }
  });
});

describe('ready volumes (VolumeReadyToAttachToNode)', () => {
  test('table: plain claims ready, DataVolume-owned ones by phase, WFFC to trigger, a missing claim a PVCNotReady sync error', () => {
    const dv = (phase: string) => new Map<string, DataVolume>([['x-claim', { metadata: { name: 'x-claim' }, spec: {}, status: { phase } } as DataVolume]]);
    const cases: { name: string; pvcs: Map<string, V1PersistentVolumeClaim>; dvs?: Map<string, DataVolume>; utility?: boolean; want: { ready: string[]; wffc: string[]; error?: string } }[] = [
      { name: 'a plain bound claim', pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { ready: ['x'], wffc: [] } },
      { name: 'missing', pvcs: new Map(), want: { ready: [], wffc: [], error: "PVCNotReady: Error determining volume status didn't find PVC x-claim" } },
      { name: 'DV Succeeded', pvcs: new Map([['x-claim', pvc('x-claim', 'Bound', 'x-claim')]]), dvs: dv('Succeeded'), want: { ready: ['x'], wffc: [] } },
      { name: 'DV PendingPopulation', pvcs: new Map([['x-claim', pvc('x-claim', 'Pending', 'x-claim')]]), dvs: dv('PendingPopulation'), want: { ready: ['x'], wffc: [] } },
      { name: 'DV WFFC', pvcs: new Map([['x-claim', pvc('x-claim', 'Pending', 'x-claim')]]), dvs: dv('WaitForFirstConsumer'), want: { ready: [], wffc: ['x'] } },
      { name: 'DV importing', pvcs: new Map([['x-claim', pvc('x-claim', 'Bound', 'x-claim')]]), dvs: dv('ImportInProgress'), want: { ready: [], wffc: [] } },
      { name: 'utility volume missing', utility: true, pvcs: new Map(), want: { ready: [], wffc: [], error: 'PVCNotReady: utility volume x references PVC x-claim which does not exist' } },
      { name: 'utility volume on a block claim is skipped', utility: true, pvcs: new Map([['x-claim', { ...pvc('x-claim'), spec: { volumeMode: 'Block' } }]]), want: { ready: [], wffc: [] } },
    ];
    for (const c of cases) {
      // arrange
      const volumes = [{ name: 'x', claimName: 'x-claim', dataVolume: false, utility: c.utility ?? false }];
      // act
      const r = readyVolumes(volumes, { pvcs: c.pvcs, dataVolumes: c.dvs ?? new Map() });
      // assert
      assert.deepEqual({ ready: r.ready.map((v) => v.name), wffc: r.wffc.map((v) => v.name), ...(r.error ? { error: `${r.error.reason}: ${r.error.message}` } : {}) }, c.want, c.name);
    }
  });
});

describe('the attachment pod match', () => {
  test('table: the claims exactly, the emptyDir and the token volume not counted, a trigger pod never', () => {
    const cases: { name: string; pod: V1Pod; volumes: string[]; want: boolean }[] = [
      { name: 'same set', pod: attachment('p', ['x', 'y']), volumes: ['y', 'x'], want: true },
      { name: 'one more wanted', pod: attachment('p', ['x']), volumes: ['x', 'y'], want: false },
      { name: 'one too many', pod: attachment('p', ['x', 'y']), volumes: ['x'], want: false },
      { name: 'no token volume injected (automount off) still matches', pod: { ...attachment('p', ['x']), spec: { containers: [], volumes: [{ name: 'hotplug-disks', emptyDir: {} }, { name: 'x', persistentVolumeClaim: { claimName: 'x' } }] } }, volumes: ['x'], want: true },
      { name: 'a trigger pod', pod: attachment('p', ['x'], { trigger: true }), volumes: ['x'], want: false },
    ];
    for (const c of cases) {
      // act / assert
      assert.equal(podMatchesVolumes(c.pod, c.volumes.map((name) => ({ name }))), c.want, c.name);
    }
  });
});

describe('the attachment pod plan (handleHotplugVolumes, cleanupAttachmentPods)', () => {
  const names = (pods: readonly V1Pod[]) => pods.map((p) => p.metadata?.name);
  test('table: create for the whole ready set, never while an old pod is pending; keep the fallback and pods holding removed volumes in use', () => {
    const cases: { name: string; vmi: VirtualMachineInstance; pods: V1Pod[]; claims?: ReturnType<typeof claims>; launcher?: V1Pod; want: { create?: string[]; delete: (string | undefined)[]; error?: string } }[] = [
      { name: 'nothing hotplugged, no pods', vmi: vmi([]), pods: [], want: { delete: [] } },
      { name: 'first volume: create', vmi: vmi([hp('x')]), pods: [], claims: claims('x-claim'), want: { create: ['x'], delete: [] } },
      { name: 'current pod matches: nothing', vmi: vmi([hp('x')]), pods: [attachment('p1', ['x'])], claims: claims('x-claim'), want: { delete: [] } },
      { name: 'second volume: a new pod for both, the running old one kept as fallback', vmi: vmi([hp('x'), hp('y')]), pods: [attachment('p1', ['x'])], claims: claims('x-claim', 'y-claim'), want: { create: ['x', 'y'], delete: [] } },
      { name: 'new pod running: the old one goes', vmi: vmi([hp('x'), hp('y')]), pods: [attachment('p1', ['x']), attachment('p2', ['x', 'y'], { created: '2026-12-01T10:01:00Z' })], claims: claims('x-claim', 'y-claim'), want: { delete: ['p1'] } },
      { name: 'new pod still pending: the old one stays as fallback', vmi: vmi([hp('x'), hp('y')]), pods: [attachment('p1', ['x']), attachment('p2', ['x', 'y'], { phase: 'Pending' })], claims: claims('x-claim', 'y-claim'), want: { delete: [] } },
      { name: 'an old pod pending blocks a create (and, not the fallback, goes)', vmi: vmi([hp('x'), hp('y')]), pods: [attachment('p1', ['x'], { phase: 'Pending' })], claims: claims('x-claim', 'y-claim'), want: { delete: ['p1'] } },
      { name: 'unplugged volume still Ready: its pod stays', vmi: vmi([hp('y')], [{ name: 'x', target: 'sda', phase: 'Ready', hotplugVolume: {} }]), pods: [attachment('p1', ['x', 'y']), attachment('p2', ['y'], { created: '2026-12-01T10:01:00Z' })], claims: claims('y-claim'), want: { delete: [] } },
      { name: 'unplugged volume unmounted: its pod goes', vmi: vmi([hp('y')], [{ name: 'x', target: '', phase: 'UnMountedFromPod', hotplugVolume: {} }]), pods: [attachment('p1', ['x', 'y']), attachment('p2', ['y'], { created: '2026-12-01T10:01:00Z' })], claims: claims('y-claim'), want: { delete: ['p1'] } },
      { name: 'last volume unplugged and released: no new pod, the old goes', vmi: vmi([], [{ name: 'x', target: '', phase: 'UnMountedFromPod', hotplugVolume: {} }]), pods: [attachment('p1', ['x'])], claims: claims(), want: { delete: ['p1'] } },
      { name: 'an already deleting pod is not deleted again', vmi: vmi([hp('x')]), pods: [attachment('p1', ['x']), attachment('p0', ['z'], { deleting: true })], claims: claims('x-claim'), want: { delete: [] } },
      { name: 'claim missing: PVCNotReady, nothing done', vmi: vmi([hp('x')]), pods: [attachment('p0', ['z'])], claims: claims(), want: { delete: [], error: 'PVCNotReady' } },
      { name: 'after a migration the old launcher\'s pod is not current: a new one', vmi: vmi([hp('x')]), pods: [{ ...attachment('p0', ['x']), metadata: { ...attachment('p0', ['x']).metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'old', uid: 'old-launcher', controller: true }] } }], claims: claims('x-claim'), want: { create: ['x'], delete: [] } },
      { name: 'launcher not ready: nothing', vmi: vmi([hp('x')]), pods: [], claims: claims('x-claim'), launcher: { ...LAUNCHER, status: { phase: 'Pending' } }, want: { delete: [] } },
    ];
    for (const c of cases) {
      // act
      const plan = planAttachmentPods({ vmi: c.vmi, launcherPod: c.launcher ?? LAUNCHER, attachmentPods: c.pods, claims: c.claims ?? claims() });
      // assert
      assert.deepEqual({ ...(plan.create ? { create: plan.create.map((v) => v.name) } : {}), delete: names(plan.delete), ...(plan.error ? { error: plan.error.reason } : {}) }, c.want, c.name);
    }
  });

  test('a WFFC volume gets one trigger pod, kept while its claim still waits', () => {
    // arrange
    const dvClaims = { pvcs: new Map([['x-claim', pvc('x-claim', 'Pending', 'x-claim')]]), dataVolumes: new Map([['x-claim', { metadata: { name: 'x-claim' }, spec: {}, status: { phase: 'WaitForFirstConsumer' } } as DataVolume]]) };
    // act
    const first = planAttachmentPods({ vmi: vmi([hp('x')]), launcherPod: LAUNCHER, attachmentPods: [], claims: dvClaims });
    const later = planAttachmentPods({ vmi: vmi([hp('x')]), launcherPod: LAUNCHER, attachmentPods: [attachment('t', ['x'], { trigger: true })], claims: dvClaims });
    // assert
    assert.deepEqual([first.triggers.map((v) => v.name), first.create], [['x'], undefined]);
    assert.deepEqual([later.triggers, later.delete], [[], []]);
  });

  test('table: a final VMI loses every attachment pod of its launcher, a running one those of ended launcher pods', () => {
    const ended: V1Pod = { ...LAUNCHER, metadata: { ...LAUNCHER.metadata, uid: 'old-launcher' }, status: { phase: 'Failed' } };
    const ofOld = { ...attachment('p-old', ['x']), metadata: { ...attachment('p-old', ['x']).metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'o', uid: 'old-launcher', controller: true }] } };
    const cases = [
      { name: 'running: the ended launcher pod\'s', phase: 'Running', want: ['p-old'] },
      { name: 'final: all of them', phase: 'Failed', want: ['p-old', 'p1'] },
    ];
    for (const c of cases) {
      // arrange
      const v = { ...vmi([hp('x')]), status: { phase: c.phase } };
      // act
      const got = orphanedAttachmentPods(v, LAUNCHER, [LAUNCHER, ended], [ofOld, attachment('p1', ['x'])]).map((p) => p.metadata?.name).sort();
      // assert
      assert.deepEqual(got, c.want, c.name);
    }
  });
});

describe('status.volumeStatus hotplug entries', () => {
  const entry = (s: VolumeStatus[], name: string) => s.find((e) => e.name === name);
  test('table: without a current pod the phase comes from the claim; with one AttachedToNode; virt-handler phases kept', () => {
    const cases: { name: string; status?: VolumeStatus; pods: V1Pod[]; pvcs: Map<string, V1PersistentVolumeClaim>; want: Partial<VolumeStatus> }[] = [
      { name: 'claim missing', pods: [], pvcs: new Map(), want: { phase: 'Pending', reason: 'FailedPvcNotFound', message: 'PVC x-claim not found', hotplugVolume: {} } },
      { name: 'claim pending', pods: [], pvcs: new Map([['x-claim', pvc('x-claim', 'Pending')]]), want: { phase: 'Pending', reason: 'PVCNotReady', message: 'PVC is in phase ClaimPending' } },
      { name: 'claim bound', pods: [], pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { phase: 'Bound', reason: 'PVCNotReady', message: 'PVC is in phase Bound' } },
      { name: 'claim lost', pods: [], pvcs: new Map([['x-claim', pvc('x-claim', 'Lost')]]), want: { phase: 'Pending', reason: 'PVCNotReady', message: 'PVC is in phase Lost' } },
      { name: 'Ready kept without a pod', status: { name: 'x', target: 'sda', phase: 'Ready', reason: 'VolumeReady', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } }, pods: [], pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { phase: 'Ready', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } } },
      { name: 'pod not ready: AttachedToNode without a UID', status: { name: 'x', target: '', phase: 'Bound' }, pods: [attachment('p1', ['x'], { ready: false })], pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: 'Created hotplug attachment pod p1, for volume x', hotplugVolume: { attachPodName: 'p1' } } },
      { name: 'pod ready: its UID', status: { name: 'x', target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: 'm' }, pods: [attachment('p1', ['x'])], pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { phase: 'AttachedToNode', message: 'm', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } } },
      { name: 'MountedToPod kept', status: { name: 'x', target: '', phase: 'MountedToPod', reason: 'VolumeMountedToPod' }, pods: [attachment('p1', ['x'])], pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { phase: 'MountedToPod', reason: 'VolumeMountedToPod' } },
      { name: 'a quick re-add while Detaching: from the claim', status: { name: 'x', target: '', phase: 'Detaching' }, pods: [attachment('p1', ['x'])], pvcs: new Map([['x-claim', pvc('x-claim')]]), want: { phase: 'Bound', reason: 'PVCNotReady' } },
    ];
    for (const c of cases) {
      // arrange
      const v = vmi([hp('x')], c.status ? [c.status] : []);
      // act
      const got = entry(vmiVolumeStatus({ vmi: v, launcherPod: LAUNCHER, attachmentPods: c.pods, pvcs: c.pvcs }), 'x');
      // assert
      for (const [k, want] of Object.entries(c.want)) assert.deepEqual(got?.[k as keyof VolumeStatus], want, `${c.name}: ${k}`);
    }
  });

  test('the claim info of a hotplug entry, entries sorted by name, the backend entry and the launcher volumes\' entries kept', () => {
    // arrange
    const v = vmi([hp('x'), hp('b')], [{ name: 'persistent-state-for-this-vm', target: '' }, { name: 'root', target: 'vda' }]);
    // act
    const got = vmiVolumeStatus({ vmi: v, launcherPod: LAUNCHER, attachmentPods: [], pvcs: new Map([['x-claim', pvc('x-claim')]]) });
    // assert
    assert.deepEqual(got.map((s) => s.name), ['b', 'persistent-state-for-this-vm', 'root', 'x']);
    assert.deepEqual(entry(got, 'x')?.persistentVolumeClaimInfo, { claimName: 'x-claim', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0.055' });
  });

  test('table: a removed volume is kept while an attachment pod holds it (Ready/MountedToPod kept, else Detaching), then dropped', () => {
    const cases: { name: string; phase: string; pods: V1Pod[]; want?: Partial<VolumeStatus> }[] = [
      { name: 'Ready, held', phase: 'Ready', pods: [attachment('p1', ['x'])], want: { phase: 'Ready', hotplugVolume: { attachPodName: 'p1', attachPodUID: 'p1-uid' } } },
      { name: 'MountedToPod, held', phase: 'MountedToPod', pods: [attachment('p1', ['x'])], want: { phase: 'MountedToPod' } },
      { name: 'UnMountedFromPod, held', phase: 'UnMountedFromPod', pods: [attachment('p1', ['x'])], want: { phase: 'Detaching', reason: 'VolumeUnMountedFromPod' } },
      { name: 'held by a deleting pod', phase: 'UnMountedFromPod', pods: [attachment('p1', ['x'], { deleting: true })], want: { phase: 'Detaching', reason: 'SuccessfulDelete', message: 'Deleted hotplug attachment pod p1, for volume x' } },
      { name: 'no pod holds it: dropped', phase: 'Detaching', pods: [] },
    ];
    for (const c of cases) {
      // arrange
      const v = vmi([], [{ name: 'x', target: '', phase: c.phase, reason: 'VolumeUnMountedFromPod', hotplugVolume: { attachPodName: 'p1' } }]);
      // act
      const got = entry(vmiVolumeStatus({ vmi: v, launcherPod: LAUNCHER, attachmentPods: c.pods, pvcs: new Map() }), 'x');
      // assert
      if (!c.want) assert.equal(got, undefined, c.name);
      else for (const [k, want] of Object.entries(c.want)) assert.deepEqual(got?.[k as keyof VolumeStatus], want, `${c.name}: ${k}`);
    }
  });

  test('events: each new SuccessfulCreate/SuccessfulDelete message once', () => {
    // arrange
    const before: VolumeStatus[] = [{ name: 'x', target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: 'Created hotplug attachment pod p1, for volume x' }];
    const after: VolumeStatus[] = [...before, { name: 'y', target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: 'Created hotplug attachment pod p2, for volume y' }, { name: 'z', target: '', phase: 'Ready', reason: 'VolumeReady' }];
    // act
    const events = volumeStatusEvents(before, after);
    // assert
    assert.deepEqual(events, [{ reason: 'SuccessfulCreate', message: 'Created hotplug attachment pod p2, for volume y' }]);
  });
});

describe('status.volumeStatus of the launcher\'s own volumes (reference-node-side §1.6, KubeVirt storage.go updateVolumeStatus)', () => {
  // A launcher pod that mounts the claims (a volume it lacks would be a hotplug volume).
  const launcherWith = (...claims: [string, string][]): V1Pod => ({ ...LAUNCHER, spec: { ...LAUNCHER.spec!, volumes: [...(LAUNCHER.spec!.volumes ?? []), ...claims.map(([name, claimName]) => ({ name, persistentVolumeClaim: { claimName } }))] } });
  test('an entry per spec volume; PVC and DataVolume entries with the claim\'s info (Block without filesystem overhead); virt-handler\'s target kept', () => {
    // arrange
    const block: V1PersistentVolumeClaim = { ...pvc('blk'), spec: { ...pvc('blk').spec, volumeMode: 'Block', accessModes: ['ReadWriteMany'] } };
    const v = vmi([{ name: 'data', persistentVolumeClaim: { claimName: 'data-claim' } }, { name: 'dv', dataVolume: { name: 'blk' } }], [{ name: 'root', target: 'vda' }]);
    // act
    const got = vmiVolumeStatus({ vmi: v, launcherPod: launcherWith(['data', 'data-claim'], ['dv', 'blk']), attachmentPods: [], pvcs: new Map([['data-claim', pvc('data-claim')], ['blk', block]]) });
    // assert
    assert.deepEqual(got.map((s) => [s.name, s.target]), [['data', ''], ['dv', ''], ['root', 'vda']]);
    assert.deepEqual(got.find((s) => s.name === 'data')?.persistentVolumeClaimInfo, { claimName: 'data-claim', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0.055' });
    assert.deepEqual(got.find((s) => s.name === 'dv')?.persistentVolumeClaimInfo, { claimName: 'blk', accessModes: ['ReadWriteMany'], volumeMode: 'Block', capacity: { storage: '1Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0' });
    assert.equal(got.find((s) => s.name === 'root')?.persistentVolumeClaimInfo, undefined, 'a containerDisk has no claim');
  });

  test('a claim not found leaves its entry without claim info (what virt-handler reports as missing)', () => {
    // act
    const got = vmiVolumeStatus({ vmi: vmi([{ name: 'data', persistentVolumeClaim: { claimName: 'gone' } }]), launcherPod: launcherWith(['data', 'gone']), attachmentPods: [], pvcs: new Map() });
    // assert
    assert.deepEqual(got.find((s) => s.name === 'data'), { name: 'data', target: '' });
  });
});
