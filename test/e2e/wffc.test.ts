/**
 * WaitForFirstConsumer end to end (issue 16, reference-vm-vmi-depth §4): the sandbox with its
 * storage side (CDI, the volume provisioner on a WFFC StorageClass) and the local runtime. A VMI on
 * a DataVolume whose claim binds only once a pod that uses it is scheduled first gets the
 * temporary pod (`kubevirt.io/ephemeral-provisioning`, the full launcher manifest with a compute
 * container that only echoes), stays Pending with `kubevirt.io/provisioning=True`; once the claim is bound and
 * the temporary pod has exited, that pod is deleted, and the launcher pod follows when the
 * DataVolume is populated; the VMI runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { LocalRuntime } from '../../local/runtime.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { WFFC_CLASS } from '../../sandbox/storage/classes.ts';
import { DATA_VOLUMES, EVENTS, PODS, PVCS, VMIS } from '../../shared/api/resources.ts';
import { CREATED_BY_LABEL, EPHEMERAL_PROVISIONING_ANNOTATION } from '../../shared/api/well-known.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { newRuntime, NS, until, vmiManifest } from './support.ts';

let sandbox: Sandbox;
let rt: LocalRuntime;
let kube: KubeClient;
const problems: string[] = [];

before(async () => {
  sandbox = await startSandbox({ nodes: 2, storage: { provisionMs: 200, importMs: 500 }, timings: { podStartupMs: 50, vmiBootMs: 50, vmiShutdownMs: 50 } });
  rt = newRuntime(sandbox, problems);
  rt.start();
  kube = createKubeClient(sandbox.apiServer.kubeConfig('test'));
});
after(async () => {
  await rt?.stop();
  await sandbox?.stop();
});

describe('a VMI on a WaitForFirstConsumer DataVolume', () => {
  test('temporary pod first, then the launcher pod; the VMI runs', async () => {
    // arrange
    const dv = 'wffc-disk';
    await kube.create(DATA_VOLUMES, {
      apiVersion: 'cdi.kubevirt.io/v1beta1',
      kind: 'DataVolume',
      metadata: { name: dv, namespace: NS },
      spec: { source: { blank: {} }, storage: { storageClassName: WFFC_CLASS, resources: { requests: { storage: '1Gi' } } } },
    } as never);
    await until('the DataVolume waits for its first consumer', async () => (await kube.get(DATA_VOLUMES, NS, dv))?.status?.phase === 'WaitForFirstConsumer', { problems });
    // act
    await kube.create(VMIS, vmiManifest('wffc', { volumes: [{ name: 'containerdisk', dataVolume: { name: dv } }] }));
    // assert: the temporary pod, while the VMI stays Pending with kubevirt.io/provisioning=True
    const uid = async () => (await kube.get(VMIS, NS, 'wffc'))?.metadata?.uid ?? '';
    const podsOf = async (): Promise<V1Pod[]> => (await kube.list(PODS, NS, { labelSelector: `${CREATED_BY_LABEL}=${await uid()}` })).items;
    let temp: V1Pod | undefined;
    await until('the temporary pod', async () => (temp = (await podsOf()).find((p) => p.metadata?.annotations?.[EPHEMERAL_PROVISIONING_ANNOTATION] === 'true')) !== undefined, { problems });
    const compute = temp!.spec?.containers.find((c) => c.name === 'compute');
    assert.deepEqual([compute?.command, compute?.args?.slice(0, 3)], [['/bin/bash'], ['-c', 'echo', 'bound PVCs']]);
    assert.match(temp!.metadata?.generateName ?? '', /^virt-launcher-wffc-$/);
    assert.ok(temp!.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === dv), 'it mounts the claim, so the scheduler binds it');
    // The pass that created the pod writes the VMI's status right after.
    let pending = await kube.get(VMIS, NS, 'wffc');
    await until('kubevirt.io/provisioning=True', async () => (pending = await kube.get(VMIS, NS, 'wffc'))?.status?.conditions?.some((c) => c.type === 'kubevirt.io/provisioning' && c.status === 'True') === true, { problems });
    assert.equal(pending?.status?.phase, 'Pending');
    // then: the claim binds, the temporary pod is deleted, the launcher pod runs the VMI
    await until('the VMI Running', async () => (await kube.get(VMIS, NS, 'wffc'))?.status?.phase === 'Running', { tries: 3000, problems });
    assert.equal((await kube.get(PVCS, NS, dv))?.status?.phase, 'Bound');
    await until('the temporary pod gone', async () => !(await podsOf()).some((p) => p.metadata?.uid === temp!.metadata?.uid), { problems });
    const launchers = (await podsOf()).filter((p) => p.metadata?.annotations?.[EPHEMERAL_PROVISIONING_ANNOTATION] === undefined);
    assert.equal(launchers.length, 1, 'one launcher pod');
    assert.equal(launchers[0]!.spec?.containers.find((c) => c.name === 'compute')?.command?.[0], '/usr/bin/virt-launcher-monitor');
    const events = (await kube.list(EVENTS, NS)).items as { reason?: string; message?: string; involvedObject?: { name?: string } }[];
    assert.ok(events.some((e) => e.involvedObject?.name === 'wffc' && e.reason === 'SuccessfulDelete' && e.message === `Deleted WaitForFirstConsumer temporary pod ${temp!.metadata?.name}`), 'the deletion event');
    const running = await kube.get(VMIS, NS, 'wffc');
    assert.equal(running?.status?.conditions?.find((c) => c.type === 'Synchronized'), undefined, 'no sync error left behind');
    assert.equal(running?.status?.conditions?.find((c) => c.type === 'kubevirt.io/provisioning'), undefined, 'Provisioning removed once Scheduling');
  });
});
