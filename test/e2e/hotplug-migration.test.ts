/**
 * A live migration of a VMI with a hotplugged volume, end to end (issue 16, reference-vm-vmi-depth
 * §3, KubeVirt's migration `createAttachmentPod`), on the sandbox with its storage side and the
 * local runtime. Once the target launcher pod is ready the migration controller creates the
 * target's own `hp-volume-` attachment pod (owned by the target pod, on the target node,
 * labelled and annotated for the migration, the claim mounted), waits for it before the hand-off,
 * names it in `migrationState.targetAttachmentPodUID`; the migration succeeds, the volume stays
 * Ready and is then held by the target's attachment pod, and the source's goes with its launcher.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { IMMEDIATE_CLASS } from '../../sandbox/storage/classes.ts';
import type { VolumeStatus } from '../../shared/api/index.ts';
import { EVENTS, MIGRATIONS, PODS, PVCS, VMIS } from '../../shared/api/resources.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { virtApiClient } from '../support/virt-api-client.ts';
import { NS, startSlice, until, vmiManifest, type Slice } from './support.ts';

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

const attachmentPods = async (): Promise<V1Pod[]> => (await kube.list(PODS, NS, { labelSelector: 'kubevirt.io=hotplug-disk' })).items.filter((p) => !p.metadata?.deletionTimestamp);
const volume = async (vmi: string, name: string): Promise<VolumeStatus | undefined> => (await kube.get(VMIS, NS, vmi))?.status?.volumeStatus?.find((s) => s.name === name);

describe('a live migration of a VMI with a hotplugged volume', () => {
  test('the target gets its own attachment pod, the migration succeeds, the volume stays Ready', async () => {
    // arrange: a running VMI with one hotplugged claim, Ready in its attachment pod
    await kube.create(PVCS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'hpm-data', namespace: NS },
      spec: { accessModes: ['ReadWriteMany'], storageClassName: IMMEDIATE_CLASS, resources: { requests: { storage: '1Gi' } } },
    });
    await until('the claim bound', async () => (await kube.get(PVCS, NS, 'hpm-data'))?.status?.phase === 'Bound', { problems });
    await kube.create(VMIS, vmiManifest('hpm'));
    await until('the VMI Running', async () => (await kube.get(VMIS, NS, 'hpm'))?.status?.phase === 'Running', { problems });
    const sourceNode = (await kube.get(VMIS, NS, 'hpm'))?.status?.nodeName;
    await virtApiClient(slice.sandbox.apiServer.kubeConfig('test')).patch(VMIS, NS, 'hpm', {
      type: 'json',
      ops: [
        { op: 'add', path: '/spec/volumes/-', value: { name: 'data', persistentVolumeClaim: { claimName: 'hpm-data', hotpluggable: true } } },
        { op: 'add', path: '/spec/domain/devices/disks/-', value: { name: 'data', disk: { bus: 'scsi' } } },
      ],
    });
    await until('the volume Ready', async () => (await volume('hpm', 'data'))?.phase === 'Ready', { tries: 3000, problems });
    const [sourceAttachment] = await attachmentPods();
    assert.equal(sourceAttachment?.spec?.nodeName, sourceNode);

    // act
    await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'hpm-mig', namespace: NS }, spec: { vmiName: 'hpm' } });

    // assert: the migration succeeds, with the target's attachment pod handed to virt-handler
    await until('the migration Succeeded', async () => (await kube.get(MIGRATIONS, NS, 'hpm-mig'))?.status?.phase === 'Succeeded', { tries: 3000, problems });
    const migration = (await kube.get(MIGRATIONS, NS, 'hpm-mig'))!;
    const state = migration.status?.migrationState;
    const targetPod = (await kube.get(PODS, NS, state?.targetPod ?? ''))!;
    const targetAttachment = (await attachmentPods()).find((p) => p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === targetPod.metadata?.uid));
    assert.ok(targetAttachment, 'an attachment pod controlled by the target pod');
    assert.match(targetAttachment.metadata?.name ?? '', /^hp-volume-\w{5}$/);
    assert.notEqual(targetPod.spec?.nodeName, sourceNode, 'the target is on another node');
    assert.equal(targetAttachment.spec?.nodeName, targetPod.spec?.nodeName, 'on the target node');
    assert.equal(targetAttachment.metadata?.labels?.['kubevirt.io/migrationJobUID'], migration.metadata?.uid);
    assert.equal(targetAttachment.metadata?.annotations?.['kubevirt.io/migrationJobName'], 'hpm-mig');
    assert.deepEqual(targetAttachment.spec?.volumes?.filter((v) => v.persistentVolumeClaim).map((v) => [v.name, v.persistentVolumeClaim?.claimName]), [['data', 'hpm-data']]);
    assert.ok(targetAttachment.spec?.containers[0]?.volumeMounts?.some((m) => m.name === 'data' && m.mountPath === '/data'), 'mounted, though Ready on the source');
    assert.equal(state?.targetAttachmentPodUID, targetAttachment.metadata?.uid);
    const scheduling = migration.status?.phaseTransitionTimestamps?.find((t) => t.phase === 'Scheduling')?.phaseTransitionTimestamp;
    assert.ok(scheduling && new Date(scheduling).getTime() >= new Date(targetAttachment.metadata?.creationTimestamp ?? 0).getTime() - 1000, 'Scheduling after the attachment pod');
    const events = (await kube.list(EVENTS, NS)).items as { involvedObject?: { uid?: string }; reason?: string; message?: string }[];
    assert.ok(events.some((e) => e.involvedObject?.uid === migration.metadata?.uid && e.reason === 'SuccessfulCreate' && e.message === `Created attachment pod ${targetAttachment.metadata?.name}`), 'the create event on the migration');

    // assert: the VMI on the target, the volume still Ready, now held by the target's attachment pod
    await until('the volume held by the target attachment pod', async () => {
      const s = await volume('hpm', 'data');
      return s?.phase === 'Ready' && s.hotplugVolume?.attachPodName === targetAttachment.metadata?.name;
    }, { tries: 3000, problems });
    assert.equal((await kube.get(VMIS, NS, 'hpm'))?.status?.nodeName, targetPod.spec?.nodeName);
    await until('the source attachment pod gone', async () => (await attachmentPods()).every((p) => p.metadata?.uid !== sourceAttachment!.metadata?.uid), { tries: 3000, problems });
  });
});
