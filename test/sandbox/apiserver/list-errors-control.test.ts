import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { apiFetch, createVmi, currentResourceVersion, emulatorOnly, podBody, startSandbox, statusOf, vmBody, VM, VMI, type RawObject, type Sandbox } from './support.ts';

describe('kube-api E, H, I: list, errors, faults, counters, audit, informers', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox();
    for (const n of ['e-a', 'e-b', 'e-c', 'e-d', 'e-e']) await createVmi(sb, n, { labels: { set: 'e' } });
  });
  after(() => sb.server.close());

  test('E23: malformed label selector is 400; E24: unsupported field label is 400', async () => {
    const bad = await statusOf(sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'a in (b' }));
    const field = await statusOf(sb.core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.containers=x' }));
    assert.equal(bad.code, 400);
    assert.deepEqual([field.code, field.message], [400, 'field label not supported: spec.containers']);
  });

  test('E24: pod field selectors spec.nodeName and status.phase', async () => {
    // arrange
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('e24-on', {}, { nodeName: 'node1' }) });
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('e24-off') });
    // act
    const list = await sb.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=node1,status.phase!=Failed' });
    // assert
    assert.deepEqual(list.items.map((p) => p.metadata!.name), ['e24-on']);
  });

  test('E25: list shape: <Kind>List, CR items carry kind, built-in items omit it', async () => {
    const raw = (await (await apiFetch(sb, '/api/v1/namespaces/default/pods')).json()) as { kind: string; items: Array<{ kind?: string }> };
    const crs = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e' })) as { kind: string; items: RawObject[] };
    assert.equal(raw.kind, 'PodList');
    assert.equal(raw.items[0]?.kind, undefined);
    assert.equal(crs.kind, 'VirtualMachineInstanceList');
    assert.equal(crs.items[0]?.kind, 'VirtualMachineInstance');
  });

  test('E26: limit/continue pages through a consistent snapshot', async () => {
    // act
    const p1 = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e', limit: 2 })) as { metadata: { continue: string; resourceVersion: string }; items: RawObject[] };
    await createVmi(sb, 'e-aa', { labels: { set: 'e' } });
    const p2 = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e', limit: 2, _continue: p1.metadata.continue })) as { metadata: { continue: string }; items: RawObject[] };
    const p3 = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e', limit: 2, _continue: p2.metadata.continue })) as { metadata: { continue?: string }; items: RawObject[] };
    // assert
    assert.deepEqual([...p1.items, ...p2.items, ...p3.items].map((i) => i.metadata.name), ['e-a', 'e-b', 'e-c', 'e-d', 'e-e'], 'e-aa was created after the snapshot');
    // The last page has no token: absent on the emulator, "" on the real server for custom resources.
    assert.ok(!p3.metadata.continue, 'no continue token on the last page');
  });

  test('E26: a continue token beyond the history is 410 Expired', emulatorOnly('compacts the emulator\'s history on demand (control.compactHistory); etcd compacts on its own schedule'), async () => {
    // arrange
    const p1 = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e', limit: 2 })) as { metadata: { continue: string } };
    await createVmi(sb, 'e-expire', { labels: { set: 'x' } });
    sb.server.control.compactHistory();
    // act
    const gone = await statusOf(sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', limit: 2, _continue: p1.metadata.continue }));
    // assert
    assert.deepEqual([gone.code, gone.reason], [410, 'Expired']);
  });

  test('E26: resourceVersionMatch=NotOlderThan serves current state; Exact serves the state at that RV', async () => {
    // arrange
    const before = await currentResourceVersion(sb);
    await createVmi(sb, 'e26-later', { labels: { set: 'e26' } });
    // act
    const notOlder = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e26', resourceVersion: String(before), resourceVersionMatch: 'NotOlderThan' })) as { items: RawObject[] };
    const exact = (await sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'set=e26', resourceVersion: String(before), resourceVersionMatch: 'Exact' })) as { items: RawObject[]; metadata: { resourceVersion: string } };
    const got = (await sb.co.getNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'e26-later', resourceVersion: String(before) } as never)) as RawObject;
    // assert
    assert.equal(notOlder.items.length, 1, 'not older than: includes the later create');
    assert.deepEqual([exact.items.length, exact.metadata.resourceVersion], [0, String(before)], 'exact: the world as it was');
    assert.equal(got.metadata.name, 'e26-later');
  });

  test('H41/I22: injected faults answer exact Status bodies (429 with Retry-After, 500, 409, 410) for matching requests only', emulatorOnly('fault injection (apiServer.faults)'), async () => {
    // arrange
    sb.server.faults.failNext(429, 1, { verb: 'get', resource: 'virtualmachineinstances' });
    sb.server.faults.failNext(500, 1, { verb: 'list', resource: 'pods' });
    sb.server.faults.failNext(409, 1, { verb: 'create' });
    sb.server.faults.failNext(410, 1, { verb: 'list', resource: 'virtualmachineinstances' });
    // act
    const untouched = await sb.core.listNamespacedConfigMap({ namespace: 'default' });
    const raw = await apiFetch(sb, '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/e-a');
    const throttled = (await raw.json()) as { code: number; reason: string };
    const internal = await statusOf(sb.core.listNamespacedPod({ namespace: 'default' }));
    const conflict = await statusOf(createVmi(sb, 'h41'));
    const expired = await statusOf(sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default' }));
    // assert
    assert.ok(untouched.items, 'non-matching requests pass');
    assert.deepEqual([raw.status, raw.headers.get('retry-after'), throttled.reason], [429, '1', 'TooManyRequests']);
    assert.deepEqual([internal.code, internal.reason], [500, 'InternalError']);
    assert.deepEqual([conflict.code, conflict.reason], [409, 'Conflict']);
    assert.deepEqual([expired.code, expired.reason], [410, 'Expired']);
    assert.equal(sb.server.faults.remaining(), 0);
  });

  test('I44: counters separate identities, verbs and subresources; reset() zeroes them', async () => {
    // arrange
    sb.server.counters.reset();
    const node = sb.server.kubeConfig('node-sim').makeApiClient((await import('@kubernetes/client-node')).CoreV1Api);
    // act
    await sb.core.listNamespacedPod({ namespace: 'default' });
    await node.listPodForAllNamespaces();
    await node.readNamespacedPodStatus({ namespace: 'default', name: 'e24-on' });
    // assert
    assert.equal(sb.server.counters.count({ identity: 'admin', verb: 'list', resource: 'pods' }), 1);
    assert.equal(sb.server.counters.count({ identity: 'node-sim' }), 2);
    assert.equal(sb.server.counters.count({ resource: 'pods/status', verb: 'get' }), 1);
    sb.server.counters.reset();
    assert.equal(sb.server.counters.count(), 0);
  });

  test('I44: the audit log records every mutation with clock time, verb, RV and the object after the write', async () => {
    // arrange
    const seen: string[] = [];
    // Only this test's object: on the real lane the control plane's own writes (the scheduler's events) go by too.
    const unsubscribe = sb.server.audit.subscribe((e) => e.name === 'audit-me' && seen.push(`${e.verb} ${e.name}`));
    // act
    // (a VirtualMachine: it has the /status subresource the entry should name; VMIs do not)
    const v = (await sb.co.createNamespacedCustomObject({ ...VM, namespace: 'default', body: vmBody('audit-me') })) as RawObject;
    await sb.co.patchNamespacedCustomObjectStatus({ ...VM, namespace: 'default', name: 'audit-me', body: [{ op: 'add', path: '/status', value: { printableStatus: 'Running' } }] });
    unsubscribe();
    // assert
    const entries = sb.server.audit.query({ resource: 'virtualmachines', name: 'audit-me' });
    assert.deepEqual(entries.map((e) => [e.verb, e.subresource ?? '']), [['create', ''], ['patch', 'status']]);
    assert.equal(entries[0]!.resourceVersion, v.metadata.resourceVersion);
    assert.equal((entries[1]!.object.status as { printableStatus: string }).printableStatus, 'Running');
    assert.deepEqual(seen, ['create audit-me', 'patch audit-me']);
  });

  test('informer: relists after a 410 and after dropped watches, and keeps its cache right', emulatorOnly('drops watches and answers 410 by fault injection'), async () => {
    // arrange
    const informer = makeInformer(sb.kc, '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances', () => sb.co.listNamespacedCustomObject({ ...VMI, namespace: 'default', labelSelector: 'inf=1' }) as never, 'inf=1');
    const adds: string[] = [];
    const deletes: string[] = [];
    informer.on('add', (o: KubernetesObject) => adds.push(o.metadata!.name!));
    informer.on('delete', (o: KubernetesObject) => deletes.push(o.metadata!.name!));
    await createVmi(sb, 'inf-a', { labels: { inf: '1' } });
    await informer.start();
    const waitFor = async (cond: () => boolean, what: string) => {
      const end = Date.now() + 8000;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`informer never saw ${what}: adds=${adds} deletes=${deletes}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      // act: a dropped watch, then changes while it reconnects
      await waitFor(() => sb.server.control.openWatches() > 0, 'its watch open');
      sb.server.faults.dropWatches();
      await createVmi(sb, 'inf-b', { labels: { inf: '1' } });
      await waitFor(() => adds.includes('inf-b'), 'inf-b after a drop');
      // act: the watch drops and the re-watch is answered 410 Expired: the informer relists
      const lists = sb.server.counters.count({ verb: 'list', resource: 'virtualmachineinstances' });
      sb.server.faults.failNext(410, 1, { verb: 'watch', resource: 'virtualmachineinstances' });
      sb.server.faults.dropWatches();
      await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'inf-a' });
      await waitFor(() => deletes.includes('inf-a'), 'inf-a deleted');
      await waitFor(() => sb.server.counters.count({ verb: 'list', resource: 'virtualmachineinstances' }) > lists, 'a relist');
      // assert
      assert.deepEqual(informer.list().map((o) => o.metadata!.name).sort(), ['inf-b']);
      assert.ok(sb.server.counters.count({ verb: 'list', resource: 'virtualmachineinstances' }) > lists, 'the 410 caused a relist');
    } finally {
      await informer.stop();
    }
  });
});
