import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { apiFetch, createVmi, vmBody, VMI_SPEC, currentResourceVersion, emulatorOnly, getVmi, MIGRATION, podBody, REAL, startSandbox, statusOf, VM, VMI, type RawObject, type Sandbox } from './support.ts';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const smp = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

describe('kube-api A–C, F: transport, identity, concurrency, writes', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox();
  });
  after(() => sb.server.close());

  test('A1/A4: health, version and discovery answer like an apiserver', async () => {
    // act
    const health = await apiFetch(sb, '/healthz');
    const version = (await (await apiFetch(sb, '/version')).json()) as { major: string };
    const kv = (await (await apiFetch(sb, '/apis/kubevirt.io/v1')).json()) as { kind: string; resources: Array<{ name: string; namespaced: boolean }> };
    const groups = (await (await apiFetch(sb, '/apis')).json()) as { groups: Array<{ name: string }> };
    // assert
    assert.equal(await health.text(), 'ok');
    assert.equal(version.major, '1');
    assert.equal(kv.kind, 'APIResourceList');
    assert.ok(kv.resources.some((r) => r.name === 'virtualmachines/status'), 'status subresource listed');
    assert.ok(!kv.resources.some((r) => r.name === 'virtualmachineinstances/status'), "KubeVirt's VMI CRD has no status subresource");
    assert.ok(groups.groups.some((g) => g.name === 'cdi.kubevirt.io'));
  });

  test('ServiceAccount admission: the default service account and a kube-api-access- token volume in every container, unless the pod opts out', async () => {
    // arrange
    const two = podBody('sa-token', {}, { containers: [{ name: 'a', image: 'x:1' }, { name: 'b', image: 'x:1' }], initContainers: [{ name: 'i', image: 'x:1' }] });
    const optOut = podBody('sa-token-off', {}, { automountServiceAccountToken: false });
    // act
    const pod = await sb.core.createNamespacedPod({ namespace: 'default', body: two as never });
    const off = await sb.core.createNamespacedPod({ namespace: 'default', body: optOut as never });
    // assert
    assert.deepEqual([pod.spec?.serviceAccountName, pod.spec?.serviceAccount], ['default', 'default']);
    const token = pod.spec?.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
    assert.match(token?.name ?? '', /^kube-api-access-[a-z0-9]{5}$/);
    assert.deepEqual(JSON.parse(JSON.stringify(token?.projected)), {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      assert.deepEqual(JSON.parse(JSON.stringify(c.volumeMounts)), [{ name: token?.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }], c.name);
    }
    assert.equal(off.spec?.serviceAccountName, 'default');
    assert.deepEqual([off.spec?.volumes, off.spec?.containers[0]?.volumeMounts], [undefined, undefined], 'automountServiceAccountToken: false');
  });

  test('A2/E23: form-encoded set-based label selectors (+ as space) are understood', async () => {
    // arrange
    await createVmi(sb, 'a2-one', { labels: { 'kubevirt.io/created-by': 'u1' } });
    await createVmi(sb, 'a2-two', { labels: { 'kubevirt.io/created-by': 'u3', 'kubevirt.io/deleted': 'x' } });
    // act
    const res = await apiFetch(sb, `/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances?labelSelector=kubevirt.io%2Fcreated-by+in+%28u1%2Cu2%29%2C%21kubevirt.io%2Fdeleted`);
    const list = (await res.json()) as { items: RawObject[] };
    // assert
    assert.deepEqual(list.items.map((i) => i.metadata.name), ['a2-one']);
  });

  test('A3: an unknown resource is a 404 Status', async () => {
    // act
    const res = await apiFetch(sb, '/apis/kubevirt.io/v1/namespaces/default/nonsense');
    const text = await res.text();
    // assert
    assert.equal(res.status, 404);
    // kube-apiserver's CRD handler answers plain text here (docs/sandbox-apiserver.md, known gaps).
    if (REAL) assert.equal(text.trim(), '404 page not found');
    else assert.equal((JSON.parse(text) as { kind: string }).kind, 'Status');
  });

  test('B6: create sets uid, creationTimestamp (seconds, Z), RV and generation 1, ignoring client values; a client resourceVersion is a 500', async () => {
    // act
    const vmi = await createVmi(sb, 'b6', { uid: 'mine', creationTimestamp: '2000-01-01T00:00:00.000Z' } as never);
    const withRv = await statusOf(createVmi(sb, 'b6-rv', { resourceVersion: '5' } as never));
    // assert
    assert.match(vmi.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.notEqual(vmi.metadata.uid, 'mine');
    assert.match(String(vmi.metadata.creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.notEqual(vmi.metadata.creationTimestamp, '2000-01-01T00:00:00Z');
    assert.equal(vmi.metadata.generation, 1);
    assert.deepEqual([withRv.code, withRv.reason, withRv.message], [500, undefined, 'resourceVersion should not be set on objects to be created'], 'the storage layer refuses it, without a reason');
  });

  test('B6: a body namespace different from the URL is 400', async () => {
    const s = await statusOf(sb.co.createNamespacedCustomObject({ ...VMI, namespace: 'default', body: { metadata: { name: 'b6-ns', namespace: 'kubevirt' }, spec: {} } }));
    assert.equal(s.code, 400);
  });

  test('B6: MicroTime fields (a Lease\'s renewTime) take exactly six fraction digits: a JavaScript Date\'s milliseconds are a 400', async () => {
    // arrange
    const lease = (name: string, renewTime: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'default' }, spec: { holderIdentity: 'n', leaseDurationSeconds: 40, renewTime } });
    const post = (body: object) => apiFetch(sb, '/apis/coordination.k8s.io/v1/namespaces/default/leases', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    // act
    const micro = await post(lease('b6-micro', '2026-01-02T03:04:05.123456Z'));
    const milli = await post(lease('b6-milli', '2026-01-02T03:04:05.123Z'));
    const status = (await milli.json()) as { reason: string; message: string };
    // assert
    assert.equal(micro.status, 201);
    assert.deepEqual([milli.status, status.reason], [400, 'BadRequest']);
    assert.match(status.message, /parsing time "2026-01-02T03:04:05\.123Z" as "2006-01-02T15:04:05\.000000Z07:00": cannot parse "\.123Z" as "\.000000"$/);
  });

  test('B7: generateName produces prefix + 5 chars of the upstream alphabet; explicit duplicates are 409 AlreadyExists', async () => {
    // act
    const pod = await sb.core.createNamespacedPod({ namespace: 'default', body: { metadata: { generateName: 'virt-launcher-b7-' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('b7-fixed') });
    const dup = await statusOf(sb.core.createNamespacedPod({ namespace: 'default', body: podBody('b7-fixed') }));
    const none = await statusOf(sb.core.createNamespacedPod({ namespace: 'default', body: { metadata: {}, spec: { containers: [] } } }));
    // assert
    assert.match(pod.metadata!.name!, /^virt-launcher-b7-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual([dup.code, dup.reason, dup.message], [409, 'AlreadyExists', 'pods "b7-fixed" already exists']);
    assert.equal(none.code, 422, 'neither name nor generateName');
  });

  test('B8: an invalid name is 422 Invalid', async () => {
    const s = await statusOf(createVmi(sb, 'Not_Valid'));
    assert.deepEqual([s.code, s.reason], [422, 'Invalid']);
  });

  test('C9: one global strictly increasing resourceVersion across resources; list RV is the global RV', async () => {
    // act
    const a = await createVmi(sb, 'c9-a');
    const p = await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('c9-p') });
    const list = await sb.core.listNamespacedConfigMap({ namespace: 'default' });
    // assert
    assert.ok(BigInt(p.metadata!.resourceVersion!) > BigInt(a.metadata.resourceVersion));
    // The real control plane's own controllers (the scheduler marking the pod unschedulable) may
    // write in between: there the list RV is at least the pod's.
    if (REAL) assert.ok(BigInt(list.metadata!.resourceVersion!) >= BigInt(p.metadata!.resourceVersion!), 'an empty list still reports the global RV');
    else assert.equal(list.metadata!.resourceVersion, p.metadata!.resourceVersion, 'an empty list still reports the global RV');
  });

  test('C10: resourceVersions are never reused by a restarted emulator', emulatorOnly('the emulator seeds its counter above every RV it issued before; the real lane starts a fresh etcd each time'), async () => {
    // arrange
    const other = await startSandbox();
    const before = await currentResourceVersion(sb);
    // act
    const rv = BigInt((await other.core.listNamespace()).metadata!.resourceVersion!);
    await other.server.close();
    // assert
    assert.ok(rv > before, `a later emulator starts above every RV already issued (${rv} > ${before})`);
  });

  test('C11: PUT with a stale resourceVersion is 409 Conflict; PUT without RV is 422 for CRs and allowed for pods', async () => {
    // arrange
    const v1 = await createVmi(sb, 'c11');
    await sb.co.replaceNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c11', body: { ...v1, metadata: { ...v1.metadata, labels: { changed: 'yes' } } } });
    // act
    const stale = await statusOf(sb.co.replaceNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c11', body: { ...v1, metadata: { ...v1.metadata, labels: { again: 'yes' } } } }));
    const noRv = await statusOf(sb.co.replaceNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c11', body: { ...v1, metadata: { name: 'c11' } } }));
    const created = await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('c11-pod') });
    // The pod's spec as stored (with its defaults): a real server refuses spec changes on update.
    const pod = await sb.core.replaceNamespacedPod({ namespace: 'default', name: 'c11-pod', body: { metadata: { name: 'c11-pod', labels: { a: 'b' } }, spec: created.spec! } });
    // assert
    assert.equal(stale.code, 409);
    assert.equal(stale.reason, 'Conflict');
    assert.equal(stale.message, 'Operation cannot be fulfilled on virtualmachineinstances.kubevirt.io "c11": the object has been modified; please apply your changes to the latest version and try again');
    assert.equal(noRv.code, 422);
    assert.equal(pod.metadata!.labels!.a, 'b', 'unconditional pod update applied');
  });

  test('C12: PATCH applies to the latest object unless it carries its own stale resourceVersion', async () => {
    // arrange
    const v1 = await createVmi(sb, 'c12');
    await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c12', body: { metadata: { labels: { a: '1' } } } }, merge);
    // act
    const ok = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c12', body: { metadata: { labels: { b: '2' } } } }, merge)) as RawObject;
    const stale = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c12', body: { metadata: { resourceVersion: v1.metadata.resourceVersion, labels: { c: '3' } } } }, merge));
    // assert
    assert.deepEqual(ok.metadata.labels, { a: '1', b: '2' });
    assert.equal(stale.code, 409);
  });

  test('C13: DELETE preconditions (uid, resourceVersion) mismatch is 409', async () => {
    // arrange
    const v = await createVmi(sb, 'c13');
    // act
    const s = await statusOf(sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c13', body: { preconditions: { uid: 'other' } } }));
    const s2 = await statusOf(sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c13', body: { preconditions: { resourceVersion: '1' } } }));
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'c13', body: { preconditions: { uid: v.metadata.uid } } });
    // assert
    assert.equal(s.code, 409);
    assert.equal(s.message, `Operation cannot be fulfilled on VirtualMachineInstance.kubevirt.io "c13": the UID in the precondition (other) does not match the UID in record (${v.metadata.uid}). The object might have been deleted and then recreated`);
    assert.match(s2.message, /: the ResourceVersion in the precondition \(1\) does not match the ResourceVersion in record \(\d+\)\. The object might have been modified$/);
    assert.equal(s2.code, 409);
    await assert.rejects(getVmi(sb, 'c13'), 'matching preconditions delete');
  });

  test('F27: JSON patch test+replace, the test-null-on-missing quirk, failed test 422, merge-shaped body 400', async () => {
    // arrange
    await createVmi(sb, 'f27');
    // act
    const ok = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f27', body: [{ op: 'test', path: '/metadata/finalizers', value: null }, { op: 'add', path: '/metadata/finalizers', value: ['kubevirt.io/virtualMachineControllerFinalize'] }] })) as RawObject;
    const failed = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f27', body: [{ op: 'test', path: '/metadata/finalizers', value: null }, { op: 'replace', path: '/spec', value: {} }] }));
    const missing = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f27', body: [{ op: 'replace', path: '/metadata/nothing/here', value: 1 }] }));
    const shaped = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f27', body: { metadata: { labels: { a: 'b' } } } }));
    // assert
    assert.deepEqual(ok.metadata.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
    // As kube-apiserver v1.37 answers: the generic message, no cause naming the failed op.
    assert.deepEqual([failed.code, failed.reason, failed.message], [422, 'Invalid', 'the server rejected our request due to an error in our request']);
    assert.deepEqual(failed.details?.causes ?? [], []);
    assert.equal(missing.code, 422);
    assert.deepEqual([shaped.code, shaped.reason], [400, 'BadRequest'], "client-node's default content type with a merge-shaped body");
  });

  test('F27: merge patch: null deletes keys, arrays replace whole', async () => {
    // arrange
    await createVmi(sb, 'f27-merge', { labels: { a: '1', b: '2' }, finalizers: ['x', 'y'] });
    // act
    const out = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f27-merge', body: { metadata: { labels: { a: null }, finalizers: ['z'] } } }, merge)) as RawObject;
    // assert
    assert.deepEqual(out.metadata.labels, { b: '2' });
    assert.deepEqual(out.metadata.finalizers, ['z']);
  });

  test('F28: strategic merge patch on pods merges containers by name, conditions by type; SMP on a CR is 415', async () => {
    // arrange
    // A scheduler name nobody serves: on the real lane kube-scheduler would otherwise write its own
    // PodScheduled condition (False: unschedulable) between the patches.
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('f28', {}, { schedulerName: 'f28-unscheduled', containers: [{ name: 'compute', image: 'a' }, { name: 'sidecar', image: 's' }] }) });
    // act
    const pod = await sb.core.patchNamespacedPod({ namespace: 'default', name: 'f28', body: { metadata: { finalizers: ['example.com/f1'] }, spec: { containers: [{ name: 'sidecar', image: 's2' }, { name: 'gone', $patch: 'delete' }] } } }, smp);
    await sb.core.patchNamespacedPodStatus({ namespace: 'default', name: 'f28', body: { status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] } } }, smp);
    const st = await sb.core.patchNamespacedPodStatus({ namespace: 'default', name: 'f28', body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } }, smp);
    const cr = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f27-merge', body: { metadata: { labels: { c: '3' } } } }, smp));
    // assert
    assert.deepEqual(pod.spec!.containers.map((c) => `${c.name}:${c.image}`), ['compute:a', 'sidecar:s2']);
    assert.deepEqual(pod.metadata!.finalizers, ['example.com/f1']);
    assert.deepEqual(st.status!.conditions!.map((c) => `${c.type}=${c.status}`), ['Ready=True', 'PodScheduled=True']);
    assert.equal(cr.code, 415);
    assert.match(cr.message, /application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/);
  });

  test('F30: status subresource (VirtualMachine): create drops status, main writes keep status, /status ignores spec and metadata', async () => {
    // arrange
    const created = (await sb.co.createNamespacedCustomObject({ ...VM, namespace: 'default', body: vmBody('f30', { runStrategy: 'Always' }, { status: { printableStatus: 'Running' } }) })) as RawObject;
    // act
    const st = (await sb.co.patchNamespacedCustomObjectStatus({ ...VM, namespace: 'default', name: 'f30', body: { metadata: { labels: { ignored: 'yes' } }, spec: { runStrategy: 'Halted' }, status: { printableStatus: 'Starting' } } }, merge)) as RawObject;
    const main = (await sb.co.patchNamespacedCustomObject({ ...VM, namespace: 'default', name: 'f30', body: { spec: { runStrategy: 'Manual' }, status: { printableStatus: 'Stopped' } } }, merge)) as RawObject;
    const stale = await statusOf(sb.co.replaceNamespacedCustomObjectStatus({ ...VM, namespace: 'default', name: 'f30', body: { ...st, status: { printableStatus: 'X' } } }));
    // assert
    assert.equal(created.status, undefined, 'create drops .status');
    assert.deepEqual([st.status?.printableStatus, st.spec?.runStrategy, st.metadata.labels], ['Starting', 'Always', undefined]);
    assert.deepEqual([main.status?.printableStatus, main.spec?.runStrategy], ['Starting', 'Manual']);
    assert.equal(stale.code, 409, 'RV conflicts apply to /status too');
  });

  test('F30: a VMI has no status subresource: create and main writes keep status, /status is 404', async () => {
    // arrange
    const created = (await sb.co.createNamespacedCustomObject({ ...VMI, namespace: 'default', body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'f30-vmi' }, spec: VMI_SPEC, status: { phase: 'Pending' } } })) as RawObject;
    // act
    const main = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f30-vmi', body: { metadata: { labels: { l: '1' } }, status: { phase: 'Scheduling' } } }, merge)) as RawObject;
    const sub = await statusOf(sb.co.patchNamespacedCustomObjectStatus({ ...VMI, namespace: 'default', name: 'f30-vmi', body: { status: { phase: 'Failed' } } }, merge));
    // assert
    assert.equal(created.status?.phase, 'Pending', 'without /status, create keeps .status');
    assert.deepEqual([main.status?.phase, main.metadata.labels], ['Scheduling', { l: '1' }], 'status and labels land in one main-resource write');
    assert.equal(sub.code, 404, 'virtualmachineinstances/status does not exist');
    assert.equal((await getVmi(sb, 'f30-vmi')).status?.phase, 'Scheduling');
  });

  test('F31: pod create resets status to Pending and applies core defaults', async () => {
    // act
    await sb.core.createNamespacedPod({ namespace: 'default', body: { ...podBody('f31'), status: { phase: 'Running' } } });
    const read = await sb.core.readNamespacedPod({ namespace: 'default', name: 'f31' });
    // assert
    assert.equal(read.status!.phase, 'Pending');
    assert.equal(read.status!.qosClass, 'BestEffort');
    assert.deepEqual([read.spec!.restartPolicy, read.spec!.terminationGracePeriodSeconds, read.spec!.dnsPolicy, read.spec!.schedulerName], ['Always', 30, 'ClusterFirst', 'default-scheduler']);
  });

  test('F31: Job create generates its selector and template labels and applies the Job defaults', async () => {
    // arrange
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'f31-job', namespace: 'default' },
      spec: {
        backoffLimit: 0,
        podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } }] },
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1', command: ['true'] }] } },
      },
    };
    // act
    const res = await apiFetch(sb, '/apis/batch/v1/namespaces/default/jobs', { method: 'POST', body: JSON.stringify(job), headers: { 'Content-Type': 'application/json' } });
    // assert
    const text = await res.text();
    assert.equal(res.status, 201, text);
    const got = JSON.parse(text) as { metadata: { uid: string }; spec: Record<string, unknown> & { selector: unknown; template: { metadata: { labels: Record<string, string> } } } };
    const uid = got.metadata.uid;
    assert.deepEqual(got.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    assert.deepEqual(got.spec.template.metadata.labels, { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'f31-job', 'controller-uid': uid, 'job-name': 'f31-job' });
    assert.deepEqual(
      [got.spec.completions, got.spec.parallelism, got.spec.backoffLimit, got.spec.completionMode, got.spec.suspend, got.spec.manualSelector, got.spec.podReplacementPolicy],
      [1, 1, 0, 'NonIndexed', false, false, 'Failed'],
    );
  });

  test('F32: generation bumps on spec change only, never on metadata or status writes (VirtualMachine)', async () => {
    // arrange
    await sb.co.createNamespacedCustomObject({ ...VM, namespace: 'default', body: vmBody('f32') });
    // act
    const meta = (await sb.co.patchNamespacedCustomObject({ ...VM, namespace: 'default', name: 'f32', body: { metadata: { labels: { a: 'b' } } } }, merge)) as RawObject;
    const status = (await sb.co.patchNamespacedCustomObjectStatus({ ...VM, namespace: 'default', name: 'f32', body: { status: { printableStatus: 'Running' } } }, merge)) as RawObject;
    const spec = (await sb.co.patchNamespacedCustomObject({ ...VM, namespace: 'default', name: 'f32', body: { spec: { runStrategy: 'Halted' } } }, merge)) as RawObject;
    const noop = (await sb.co.patchNamespacedCustomObject({ ...VM, namespace: 'default', name: 'f32', body: { spec: { runStrategy: 'Halted' } } }, merge)) as RawObject;
    // assert
    assert.deepEqual([meta.metadata.generation, status.metadata.generation, spec.metadata.generation], [1, 1, 2]);
    assert.equal(noop.metadata.resourceVersion, spec.metadata.resourceVersion, 'a no-op patch writes nothing');
  });

  test('F32: without a status subresource (VMI) a status change bumps generation, as for any CRD', async () => {
    // arrange
    await createVmi(sb, 'f32-vmi');
    // act
    const meta = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f32-vmi', body: { metadata: { labels: { a: 'b' } } } }, merge)) as RawObject;
    const status = (await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'f32-vmi', body: { status: { phase: 'Running' } } }, merge)) as RawObject;
    // assert
    assert.deepEqual([meta.metadata.generation, status.metadata.generation, status.status?.phase], [1, 2, 'Running']);
  });

  test('F33: dryRun=All validates and returns the result without persisting', async () => {
    // act
    await sb.co.createNamespacedCustomObject({ ...VMI, namespace: 'default', body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'f33' }, spec: VMI_SPEC }, dryRun: 'All' });
    // assert
    const s = await statusOf(getVmi(sb, 'f33'));
    assert.equal(s.code, 404);
  });

  test('F30: migrations have the status subresource too', async () => {
    // arrange
    await sb.co.createNamespacedCustomObject({ ...MIGRATION, namespace: 'default', body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig' }, spec: { vmiName: 'x' }, status: { phase: 'Running' } } });
    // act
    const m = (await sb.co.getNamespacedCustomObject({ ...MIGRATION, namespace: 'default', name: 'mig' })) as RawObject;
    // assert
    assert.equal(m.status, undefined);
  });
});
