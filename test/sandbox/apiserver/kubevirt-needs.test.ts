/**
 * What KubeVirt's virt-controller needs of an API server besides its own kinds, on both lanes
 * (VR_CONTROL_PLANE=real holds the emulator's answers against kube-apiserver): the CRD list and
 * watch, Ingresses, NetworkAttachmentDefinitions, PriorityClasses and the Priority admission,
 * DefaultStorageClass admission, ResourceQuota's container constraint, and a JSON-patch `replace`
 * of a missing `/metadata/finalizers` (which its VM controller sends).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ApiextensionsV1Api, CustomObjectsApi, NetworkingV1Api, SchedulingV1Api, StorageV1Api } from '@kubernetes/client-node';
import { apiFetch, createVmi, podBody, startSandbox, statusOf, VMI, type RawObject, type Sandbox } from './support.ts';

describe('the APIs and admission KubeVirt relies on', () => {
  let sb: Sandbox;
  // One namespace per run: the real lane's cluster outlives a test's objects.
  const ns = `kvneeds-${randomBytes(3).toString('hex')}`;
  before(async () => {
    sb = await startSandbox();
    await sb.core.createNamespace({ body: { metadata: { name: ns } } });
  });
  after(() => sb.server.close());

  test('JSON patch: replace of a missing /metadata/finalizers sets it, as evanphx/json-patch v4 does in kube-apiserver', async () => {
    // arrange
    await createVmi(sb, 'jp-replace', {}, ns);
    // act
    const patched = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: ns, name: 'jp-replace', body: [{ op: 'replace', path: '/metadata/finalizers', value: ['kubevirt.io/foregroundDeleteVirtualMachine'] }] })) as RawObject;
    const deep = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: ns, name: 'jp-replace', body: [{ op: 'replace', path: '/metadata/nothing/here', value: 1 }] }));
    // assert
    assert.deepEqual(patched.metadata.finalizers, ['kubevirt.io/foregroundDeleteVirtualMachine'], 'a missing key of an existing object is replaced like an add');
    assert.equal(deep.code, 422, 'a missing parent is still refused');
  });

  test('CustomResourceDefinitions: listed (KubeVirt\'s and CDI\'s among them, established) and watchable', async () => {
    // arrange
    const api = sb.kc.makeApiClient(ApiextensionsV1Api);
    // act
    const list = await api.listCustomResourceDefinition();
    const vmi = list.items.find((c) => c.metadata?.name === 'virtualmachineinstances.kubevirt.io');
    const watch = await apiFetch(sb, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true&resourceVersion=${list.metadata?.resourceVersion}&timeoutSeconds=1`);
    // assert
    for (const name of ['virtualmachines.kubevirt.io', 'datavolumes.cdi.kubevirt.io', 'volumesnapshots.snapshot.storage.k8s.io', 'network-attachment-definitions.k8s.cni.cncf.io']) {
      assert.ok(list.items.some((c) => c.metadata?.name === name), `${name} listed`);
    }
    assert.equal(vmi?.spec.scope, 'Namespaced');
    assert.equal(vmi?.spec.names.kind, 'VirtualMachineInstance');
    assert.ok(vmi?.spec.versions.some((v) => v.name === 'v1' && v.served && v.storage), 'v1 served and stored');
    assert.equal(vmi?.status?.conditions?.find((c) => c.type === 'Established')?.status, 'True');
    assert.equal(watch.status, 200);
  });

  test('Ingresses, NetworkAttachmentDefinitions: created, read and listed', async () => {
    // arrange
    const net = sb.kc.makeApiClient(NetworkingV1Api);
    const custom = sb.kc.makeApiClient(CustomObjectsApi);
    const nad = { group: 'k8s.cni.cncf.io', version: 'v1', plural: 'network-attachment-definitions' };
    // act
    await net.createNamespacedIngress({ namespace: ns, body: { metadata: { name: 'export' }, spec: { rules: [{ host: 'vm.example.com' }] } } });
    await custom.createNamespacedCustomObject({ ...nad, namespace: ns, body: { apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name: 'sriov' }, spec: { config: '{"cniVersion":"0.3.1","type":"sriov"}' } } });
    const ingresses = await net.listNamespacedIngress({ namespace: ns });
    const read = (await custom.getNamespacedCustomObject({ ...nad, namespace: ns, name: 'sriov' })) as { spec: { config: string } };
    // assert
    assert.deepEqual(ingresses.items.map((i) => i.spec?.rules?.[0]?.host), ['vm.example.com']);
    assert.equal(read.spec.config, '{"cniVersion":"0.3.1","type":"sriov"}');
  });

  test('PriorityClasses: the two system classes exist; Priority admission resolves a class, refuses an unknown one', async () => {
    // arrange
    const sched = sb.kc.makeApiClient(SchedulingV1Api);
    const cls = `kvneeds-high-${ns}`;
    await sched.createPriorityClass({ body: { metadata: { name: cls }, value: 1000 } });
    // act
    const system = await sched.readPriorityClass({ name: 'system-node-critical' });
    const pod = await sb.core.createNamespacedPod({ namespace: ns, body: podBody('prio', {}, { priorityClassName: cls }) as never });
    const plain = await sb.core.createNamespacedPod({ namespace: ns, body: podBody('prio-none') as never });
    const unknown = await statusOf(sb.core.createNamespacedPod({ namespace: ns, body: podBody('prio-bad', {}, { priorityClassName: 'no-such-class' }) as never }));
    // assert
    assert.equal(system.value, 2000001000);
    assert.deepEqual([pod.spec?.priority, pod.spec?.preemptionPolicy], [1000, 'PreemptLowerPriority']);
    assert.deepEqual([plain.spec?.priority, plain.spec?.preemptionPolicy], [0, 'PreemptLowerPriority']);
    assert.deepEqual([unknown.code, unknown.message], [403, 'pods "prio-bad" is forbidden: no PriorityClass with name no-such-class was found']);
    await sched.deletePriorityClass({ name: cls });
  });

  test('DefaultStorageClass: a claim naming no class gets the newest default one; "" and a named class stay', async () => {
    // arrange
    const storage = sb.kc.makeApiClient(StorageV1Api);
    const cls = `kvneeds-default-${ns}`;
    await storage.createStorageClass({ body: { metadata: { name: cls, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/none' } });
    const claim = (name: string, storageClassName?: string) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(storageClassName !== undefined ? { storageClassName } : {}) } });
    try {
      // act
      const none = await sb.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('no-class') });
      const empty = await sb.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('empty-class', '') });
      const named = await sb.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('named-class', 'other') });
      // assert
      assert.equal(none.spec?.storageClassName, cls, 'the default class (the newest default on a cluster with several)');
      assert.equal(empty.spec?.storageClassName, '', '"" asks for no class');
      assert.equal(named.spec?.storageClassName, 'other');
    } finally {
      await storage.deleteStorageClass({ name: cls });
    }
  });

  test('ResourceQuota: a pod whose containers state no limits is refused where a quota limits them, with the real message', async () => {
    // arrange
    const hard = { 'limits.cpu': '4', 'limits.memory': '4Gi' };
    await sb.core.createNamespacedResourceQuota({ namespace: ns, body: { metadata: { name: 'limits' }, spec: { hard } } });
    // The quota controller's status (the real lane's controller manager writes the same).
    const q = await sb.core.readNamespacedResourceQuota({ namespace: ns, name: 'limits' });
    await sb.core.replaceNamespacedResourceQuotaStatus({ namespace: ns, name: 'limits', body: { ...q, status: { hard, used: { 'limits.cpu': '0', 'limits.memory': '0' } } } }).catch(() => undefined);
    const withLimits = podBody('quota-ok', {}, { containers: [{ name: 'c', image: 'x:1', resources: { limits: { cpu: '1', memory: '1Gi' } } }] });
    const without = podBody('quota-bad', {}, { containers: [{ name: 'compute', image: 'x:1', resources: { limits: { cpu: '1' } } }, { name: 'sidecar', image: 'x:1' }] });
    // act
    const refused = await statusOf(sb.core.createNamespacedPod({ namespace: ns, body: without as never, dryRun: 'All' }));
    const ok = await sb.core.createNamespacedPod({ namespace: ns, body: withLimits as never, dryRun: 'All' });
    // assert
    assert.equal(refused.code, 403);
    assert.equal(refused.message, 'pods "quota-bad" is forbidden: failed quota: limits: must specify limits.cpu for: sidecar; limits.memory for: compute,sidecar');
    assert.equal(ok.metadata?.name, 'quota-ok');
  });
});
