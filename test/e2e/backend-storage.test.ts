/**
 * Backend storage end to end (issue 16, reference-vm-vmi-depth §2): a VM with a persistent TPM on
 * the sandbox with its storage side. The VMI controller creates the `persistent-state-for-<vmi>-`
 * PVC (owned by the VM, on the default class, 10Mi, Filesystem) before the launcher pod, which
 * mounts it as `vm-state`; the VMI's volume status names it; a restart of the VM keeps the same PVC,
 * and once the persistent TPM is switched off the next start deletes it.
 * A live migration of it (ReadWriteOnce) gets a target PVC of its own, handed over to the VMI once
 * the target domain is ready, and the source PVC is deleted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { LocalRuntime } from '../../local/runtime.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { MIGRATIONS, PODS, PVCS, VMIS, VMS } from '../../shared/api/resources.ts';
import { CREATED_BY_LABEL } from '../../shared/api/well-known.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { newRuntime, NS, until, vmManifest } from './support.ts';

let sandbox: Sandbox;
let rt: LocalRuntime;
let kube: KubeClient;
const problems: string[] = [];

before(async () => {
  sandbox = await startSandbox({ nodes: 2, storage: { provisionMs: 200 }, timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50 } });
  rt = newRuntime(sandbox, problems);
  rt.start();
  kube = createKubeClient(sandbox.apiServer.kubeConfig('test'));
});
after(async () => {
  await rt?.stop();
  await sandbox?.stop();
});

async function backendPvcs(): Promise<V1PersistentVolumeClaim[]> {
  return (await kube.list(PVCS, NS, { labelSelector: 'persistent-state-for=tpm' })).items.filter((p) => !p.metadata?.deletionTimestamp);
}

describe('a VM with a persistent TPM', () => {
  test('its backend PVC before the launcher pod, mounted as vm-state, kept across a restart', async () => {
    // arrange
    const vm = vmManifest('tpm', { runStrategy: 'Always' });
    vm.spec.template.spec!.domain.devices.tpm = { persistent: true } as never;
    // act
    await kube.create(VMS, vm);
    // assert
    await until('the VMI Running', async () => (await kube.get(VMIS, NS, 'tpm'))?.status?.phase === 'Running', { tries: 3000, problems });
    const [pvc, ...more] = await backendPvcs();
    assert.equal(more.length, 0, 'one backend PVC');
    const vmUid = (await kube.get(VMS, NS, 'tpm'))?.metadata?.uid;
    assert.match(pvc!.metadata?.name ?? '', /^persistent-state-for-tpm-\w+$/);
    assert.equal(pvc!.metadata?.ownerReferences?.[0]?.uid, vmUid, 'owned by the VM');
    assert.deepEqual([pvc!.spec?.resources?.requests?.storage, pvc!.spec?.volumeMode, pvc!.spec?.accessModes], ['10Mi', 'Filesystem', ['ReadWriteOnce']]);
    assert.equal(pvc!.status?.phase, 'Bound');
    const vmi = await kube.get(VMIS, NS, 'tpm');
    const [pod] = (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${vmi?.metadata?.uid}` })).items;
    assert.ok(new Date(pod!.metadata!.creationTimestamp!).getTime() >= new Date(pvc!.metadata!.creationTimestamp!).getTime(), 'the PVC came first');
    assert.equal(pod!.spec?.volumes?.find((v) => v.name === 'vm-state')?.persistentVolumeClaim?.claimName, pvc!.metadata?.name);
    const mounts = pod!.spec?.containers.find((c) => c.name === 'compute')?.volumeMounts?.filter((m) => m.name === 'vm-state').map((m) => m.subPath);
    assert.deepEqual(mounts, ['meta', 'swtpm', 'swtpm-localca']);
    assert.equal(vmi?.status?.volumeStatus?.find((v) => v.name === 'persistent-state-for-this-vm')?.persistentVolumeClaimInfo?.claimName, pvc!.metadata?.name);
    // act: restart the VM (stop, then start)
    await kube.patch(VMS, NS, 'tpm', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    await until('the VMI gone', async () => (await kube.get(VMIS, NS, 'tpm')) === undefined, { tries: 3000, problems });
    await kube.patch(VMS, NS, 'tpm', { type: 'merge', body: { spec: { runStrategy: 'Always' } } });
    await until('Running again', async () => (await kube.get(VMIS, NS, 'tpm'))?.status?.phase === 'Running', { tries: 3000, problems });
    // assert: the same PVC
    const after = await backendPvcs();
    assert.deepEqual(after.map((p) => p.metadata?.uid), [pvc!.metadata?.uid]);
    // act: the persistent TPM switched off, then a restart
    await kube.patch(VMS, NS, 'tpm', { type: 'merge', body: { spec: { runStrategy: 'Halted' } } });
    await until('the VMI gone again', async () => (await kube.get(VMIS, NS, 'tpm')) === undefined, { tries: 3000, problems });
    await kube.patch(VMS, NS, 'tpm', { type: 'json', ops: [{ op: 'remove', path: '/spec/template/spec/domain/devices/tpm' }, { op: 'replace', path: '/spec/runStrategy', value: 'Always' }] });
    await until('Running without a TPM', async () => (await kube.get(VMIS, NS, 'tpm'))?.status?.phase === 'Running', { tries: 3000, problems });
    // assert: the VMI controller deleted the PVC it no longer needs before the launcher pod
    assert.deepEqual(await backendPvcs(), [], 'the leftover backend PVC is gone');
    const vmiWithout = await kube.get(VMIS, NS, 'tpm');
    const [podWithout] = (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${vmiWithout?.metadata?.uid}` })).items;
    assert.equal(podWithout?.spec?.volumes?.some((v) => v.name === 'vm-state'), false, 'no vm-state volume');
  });
});

describe('a live migration of a VM with a persistent TPM', () => {
  test('a target PVC of its own, handed over to the VMI, the source deleted', async () => {
    // arrange
    const vm = vmManifest('tpm-mig', { runStrategy: 'Always' });
    vm.spec.template.spec!.domain.devices.tpm = { persistent: true } as never;
    await kube.create(VMS, vm);
    await until('the VMI Running', async () => (await kube.get(VMIS, NS, 'tpm-mig'))?.status?.phase === 'Running', { tries: 3000, problems });
    const mine = async () => (await kube.list(PVCS, NS)).items.filter((p) => p.metadata?.name?.startsWith('persistent-state-for-tpm-mig-'));
    const [source] = await mine();
    const sourceNode = (await kube.get(VMIS, NS, 'tpm-mig'))?.status?.nodeName;
    // act
    await kube.create(MIGRATIONS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-tpm', namespace: NS }, spec: { vmiName: 'tpm-mig' } });
    // assert
    await until('the migration Succeeded', async () => (await kube.get(MIGRATIONS, NS, 'mig-tpm'))?.status?.phase === 'Succeeded', { tries: 3000, problems });
    const state = (await kube.get(MIGRATIONS, NS, 'mig-tpm'))?.status?.migrationState;
    assert.equal(state?.sourcePersistentStatePVCName, source!.metadata?.name);
    const targetName = state?.targetPersistentStatePVCName;
    assert.ok(targetName && targetName !== source!.metadata?.name, 'a target PVC of its own');
    await until('the source PVC gone', async () => (await mine()).every((p) => p.metadata?.name === targetName || p.metadata?.deletionTimestamp), { tries: 3000, problems });
    const target = await kube.get(PVCS, NS, targetName);
    assert.equal(target?.metadata?.labels?.['persistent-state-for'], 'tpm-mig', 'handed over to the VMI');
    assert.equal(target?.metadata?.labels?.['kubevirt.io/migrationName'], undefined);
    const vmi = await kube.get(VMIS, NS, 'tpm-mig');
    assert.notEqual(vmi?.status?.nodeName, sourceNode, 'moved');
    const [pod] = (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${vmi?.metadata?.uid}` })).items.filter((p) => p.spec?.nodeName === vmi?.status?.nodeName);
    assert.equal(pod?.spec?.volumes?.find((v) => v.name === 'vm-state')?.persistentVolumeClaim?.claimName, targetName, 'the target pod mounts it');
    await until('the VMI\'s volume status names the target', async () => (await kube.get(VMIS, NS, 'tpm-mig'))?.status?.volumeStatus?.find((v) => v.name === 'persistent-state-for-this-vm')?.persistentVolumeClaimInfo?.claimName === targetName, { tries: 3000, problems });
  });
});
