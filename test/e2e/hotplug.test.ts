/**
 * Volume hotplug end to end (issue 16, reference-vm-vmi-depth §3), on the sandbox with its storage
 * side and the local runtime (relay → queue → functions). A PVC added to a running VMI's spec gets
 * the one `hp-volume-` attachment pod on the launcher's node (owned by the launcher pod, the
 * service-account token volume beside the claims), and its volume status goes AttachedToNode →
 * MountedToPod → Ready (the simulated virt-handler owns the last two); a second PVC replaces the
 * pod with one holding both; an unplug ends with one pod holding the remaining volume and the
 * unplugged entry gone. The VM side: a hotpluggable volume added to a running VM's template
 * (declarative hotplug) and a `status.volumeRequests` entry reach the VMI the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { VirtualMachineInstance, VolumeStatus } from '../../shared/api/index.ts';
import { EVENTS, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { CREATED_BY_LABEL } from '../../shared/api/well-known.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { virtApiClient } from '../support/virt-api-client.ts';
import { NS, startSlice, until, vmiManifest, vmManifest, type Slice } from './support.ts';

let slice: Slice;
let kube: KubeClient;
let problems: string[] = [];

before(async () => {
  slice = await startSlice({ storage: { provisionMs: 100 }, timings: { vmiHotplugMs: 50 } });
  ({ kube, problems } = slice);
});
after(async () => {
  await slice?.stop();
});

async function createClaim(name: string): Promise<void> {
  await kube.create(PVCS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: IMMEDIATE_CLASS, resources: { requests: { storage: '1Gi' } } },
  });
  await until(`${name} bound`, async () => (await kube.get(PVCS, NS, name))?.status?.phase === 'Bound', { problems });
}

async function attachmentPods(vmi: string): Promise<V1Pod[]> {
  const v = await kube.get(VMIS, NS, vmi);
  const launchers = new Set((await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${v?.metadata?.uid ?? ''}` })).items.map((p) => p.metadata?.uid));
  return (await kube.list(PODS, NS, { labelSelector: 'kubevirt.io=hotplug-disk' })).items.filter((p) => p.metadata?.ownerReferences?.some((r) => launchers.has(r.uid)));
}

const claimsOf = (pod: V1Pod) => (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.name] : [])).sort();
const hotplugStatus = (vmi: VirtualMachineInstance | undefined): VolumeStatus[] => (vmi?.status?.volumeStatus ?? []).filter((s) => s.hotplugVolume !== undefined);

/** Adds a hotpluggable PVC volume and its disk to a running VMI's spec (what the VMI addvolume subresource does). */
async function plugIntoVmi(vmi: string, volume: string, claim: string): Promise<void> {
  // Appends ('-'): safe against the controllers' concurrent status writes, unlike a resourceVersion test.
  await virtApiClient(slice.sandbox.apiServer.kubeConfig('test')).patch(VMIS, NS, vmi, {
    type: 'json',
    ops: [
      { op: 'add', path: '/spec/volumes/-', value: { name: volume, persistentVolumeClaim: { claimName: claim, hotpluggable: true } } },
      { op: 'add', path: '/spec/domain/devices/disks/-', value: { name: volume, disk: { bus: 'scsi' } } },
    ],
  });
}

/** Waits until the VMI's hotplug entries are exactly `names`, all Ready, held by one current attachment pod. */
async function allReady(vmi: string, names: string[]): Promise<{ pod: V1Pod; status: VolumeStatus[] }> {
  let pod: V1Pod | undefined;
  let status: VolumeStatus[] = [];
  await until(`${names.join(', ')} Ready in one attachment pod`, async () => {
    status = hotplugStatus(await kube.get(VMIS, NS, vmi));
    const live = (await attachmentPods(vmi)).filter((p) => !p.metadata?.deletionTimestamp);
    pod = live.length === 1 ? live[0] : undefined;
    return pod !== undefined && JSON.stringify(claimsOf(pod)) === JSON.stringify([...names].sort()) &&
      JSON.stringify(status.map((s) => s.name)) === JSON.stringify([...names].sort()) &&
      status.every((s) => s.phase === 'Ready' && s.hotplugVolume?.attachPodName === pod?.metadata?.name);
  }, { tries: 3000, problems });
  return { pod: pod!, status };
}

describe('hotplug of PVCs to a running VMI', () => {
  test('one attachment pod for the set, replaced when a second volume comes, the unplugged volume gone', async () => {
    // arrange
    await createClaim('hp-a');
    await createClaim('hp-b');
    await kube.create(VMIS, vmiManifest('hp'));
    await until('the VMI Running', async () => (await kube.get(VMIS, NS, 'hp'))?.status?.phase === 'Running', { problems });
    const uid = (await kube.get(VMIS, NS, 'hp'))?.metadata?.uid ?? '';
    const [launcher] = (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${uid}` })).items;

    // act: plug the first claim
    await plugIntoVmi('hp', 'disk-a', 'hp-a');
    // assert: its attachment pod, on the launcher's node, owned by the launcher pod
    const first = await allReady('hp', ['disk-a']);
    assert.match(first.pod.metadata?.name ?? '', /^hp-volume-\w{5}$/);
    assert.equal(first.pod.metadata?.ownerReferences?.[0]?.uid, launcher!.metadata?.uid, 'controlled by the launcher pod');
    assert.equal(first.pod.metadata?.annotations?.['kubevirt.io/owner-vmi-name'], 'hp');
    assert.equal(first.pod.spec?.nodeName, launcher!.spec?.nodeName, 'on the launcher node');
    assert.ok(first.pod.spec?.volumes?.some((v) => v.name.startsWith('kube-api-access-') && v.projected), 'the service-account token volume the API server injects');
    assert.ok(first.pod.spec?.volumes?.some((v) => v.name === 'hotplug-disks' && v.emptyDir));
    const a = first.status[0]!;
    assert.equal(a.hotplugVolume?.attachPodUID, first.pod.metadata?.uid);
    assert.deepEqual([a.reason, a.message, a.persistentVolumeClaimInfo?.claimName], ['VolumeReady', 'Successfully attach hotplugged volume disk-a to VM', 'hp-a']);
    assert.ok(a.target, 'a disk target');
    const events = (await kube.list(EVENTS, NS)).items as { involvedObject?: { uid?: string }; reason?: string; message?: string }[];
    const messages = events.filter((e) => e.involvedObject?.uid === uid).map((e) => e.message);
    assert.ok(messages.includes(`Created attachment pod ${first.pod.metadata?.name}`), 'the create event');
    assert.ok(messages.includes(`Created hotplug attachment pod ${first.pod.metadata?.name}, for volume disk-a`), 'the AttachedToNode event');

    // act: plug the second claim
    await plugIntoVmi('hp', 'disk-b', 'hp-b');
    // assert: a new pod holding both; the first one gone
    const second = await allReady('hp', ['disk-a', 'disk-b']);
    assert.notEqual(second.pod.metadata?.uid, first.pod.metadata?.uid, 'replaced, never edited');
    await until('the first attachment pod gone', async () => (await attachmentPods('hp')).every((p) => p.metadata?.uid !== first.pod.metadata?.uid), { problems });

    // act: unplug the first
    const v = await kube.get(VMIS, NS, 'hp');
    const vi = v!.spec.volumes!.findIndex((x) => x.name === 'disk-a');
    const di = v!.spec.domain.devices.disks!.findIndex((x) => x.name === 'disk-a');
    await virtApiClient(slice.sandbox.apiServer.kubeConfig('test')).patch(VMIS, NS, 'hp', { // virt-api's removevolume
      type: 'json',
      ops: [
        { op: 'test', path: `/spec/volumes/${vi}/name`, value: 'disk-a' },
        { op: 'remove', path: `/spec/volumes/${vi}` },
        { op: 'test', path: `/spec/domain/devices/disks/${di}/name`, value: 'disk-a' },
        { op: 'remove', path: `/spec/domain/devices/disks/${di}` },
      ],
    });
    // assert: one pod with disk-b only, and disk-a's entry gone
    const third = await allReady('hp', ['disk-b']);
    assert.notEqual(third.pod.metadata?.uid, second.pod.metadata?.uid);
    await until('only the current attachment pod left', async () => (await attachmentPods('hp')).length === 1, { problems });
  });
});

describe('hotplug through a VM', () => {
  test('a hotpluggable volume added to the running VM template, then a volumeRequests add and remove', async () => {
    // arrange
    await createClaim('hp-c');
    await createClaim('hp-d');
    await kube.create(VMS, vmManifest('hpvm', { runStrategy: 'Always' }));
    await until('the VMI Running', async () => (await kube.get(VMIS, NS, 'hpvm'))?.status?.phase === 'Running', { problems });

    // act: declarative hotplug (kubectl patch of the VM spec)
    await kube.patch(VMS, NS, 'hpvm', {
      type: 'json',
      ops: [
        { op: 'add', path: '/spec/template/spec/volumes/-', value: { name: 'disk-c', persistentVolumeClaim: { claimName: 'hp-c', hotpluggable: true } } },
        { op: 'add', path: '/spec/template/spec/domain/devices/disks/-', value: { name: 'disk-c', disk: { bus: 'scsi' } } },
      ],
    });
    // assert: the VMI gets it, attached and Ready
    await allReady('hpvm', ['disk-c']);

    // act: a volume request on the VM's status (the legacy addvolume path)
    await kube.patch(VMS, NS, 'hpvm', {
      type: 'merge',
      body: { status: { volumeRequests: [{ addVolumeOptions: { name: 'disk-d', disk: { name: 'disk-d', disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: 'hp-d' } } } }] } },
    }, { subresource: 'status' });
    // assert: in the VM template and the VMI, Ready; the request trimmed
    await allReady('hpvm', ['disk-c', 'disk-d']);
    await until('the add request trimmed', async () => ((await kube.get(VMS, NS, 'hpvm'))?.status?.volumeRequests ?? []).length === 0, { problems });
    const template = (await kube.get(VMS, NS, 'hpvm'))?.spec.template.spec;
    assert.equal(template?.volumes?.find((x) => x.name === 'disk-d')?.persistentVolumeClaim?.hotpluggable, true, 'hotpluggable forced');
    assert.ok(template?.domain.devices.disks?.some((d) => d.name === 'disk-d'));

    // act: remove it by request
    await kube.patch(VMS, NS, 'hpvm', { type: 'merge', body: { status: { volumeRequests: [{ removeVolumeOptions: { name: 'disk-d' } }] } } }, { subresource: 'status' });
    // assert
    await allReady('hpvm', ['disk-c']);
    await until('the remove request trimmed', async () => ((await kube.get(VMS, NS, 'hpvm'))?.status?.volumeRequests ?? []).length === 0, { problems });
    assert.ok(!(await kube.get(VMS, NS, 'hpvm'))?.spec.template.spec?.volumes?.some((x) => x.name === 'disk-d'));
  });
});
