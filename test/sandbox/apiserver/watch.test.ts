import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createVmi, collectWatch, currentResourceVersion, emulatorOnly, getVmi, podBody, REAL, startSandbox, VMI, type RawObject, type Sandbox } from './support.ts';

const VMIS = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances';

describe('kube-api D: watch', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox({ watchHistory: 50 });
  });
  after(() => sb.server.close());

  test('D14/D15: watch without resourceVersion sends synthetic ADDED for current objects, then live events in RV order', async () => {
    // arrange
    await createVmi(sb, 'd15-a');
    const w = await collectWatch(sb.kc, VMIS, {});
    // act
    await w.until(1);
    await createVmi(sb, 'd15-b');
    await w.until(2);
    w.stop();
    // assert
    assert.deepEqual(w.events.slice(0, 2).map((e) => `${e.type} ${e.name}`), ['ADDED d15-a', 'ADDED d15-b'], 'initial state first, then the live create');
    assert.ok(BigInt(w.events[1]!.rv) > BigInt(w.events[0]!.rv), 'events arrive in RV order');
    assert.equal(w.events[0]!.obj.kind, 'VirtualMachineInstance', 'watch events carry kind');
  });

  test('D15: watch from a resourceVersion replays every later change, including deletes', async () => {
    // arrange
    const a = await createVmi(sb, 'd15-replay');
    const from = a.metadata.resourceVersion;
    await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'd15-replay', body: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }] });
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'd15-replay' });
    // act
    const w = await collectWatch(sb.kc, VMIS, { resourceVersion: from, fieldSelector: 'metadata.name=d15-replay' });
    await w.until(2);
    w.stop();
    // assert
    assert.deepEqual(w.events.map((e) => e.type), ['MODIFIED', 'DELETED'], 'only the changes after the given RV are replayed');
    assert.ok(BigInt(w.events[1]!.rv) > BigInt(w.events[0]!.rv), 'the DELETED event carries the deletion RV');
  });

  test('D3/D15: watch from a too-old resourceVersion answers 200 + ERROR 410 Expired and closes cleanly', emulatorOnly('compacts the emulator\'s history on demand (control.compactHistory); etcd compacts on its own schedule'), async () => {
    // arrange
    const old = (await createVmi(sb, 'd15-old')).metadata.resourceVersion;
    await createVmi(sb, 'd15-newer');
    sb.server.control.compactHistory();
    // act
    const w = await collectWatch(sb.kc, VMIS, { resourceVersion: old });
    const err = await w.ended();
    // assert
    assert.equal(w.events.length, 1, 'exactly one event');
    assert.equal(w.events[0]!.type, 'ERROR');
    const status = w.events[0]!.obj as unknown as { code: number; reason: string; message: string };
    assert.equal(status.code, 410);
    assert.equal(status.reason, 'Expired');
    assert.match(status.message, new RegExp(`^too old resource version: ${old} \\(\\d+\\)$`));
    assert.equal(err, null, 'a clean end of stream, not a socket error');
  });

  test('D16: the bounded history makes RVs older than watchHistory events answer 410', emulatorOnly('the emulator\'s watch history is a knob (watchHistory: 50); the real watch cache holds far more'), async () => {
    // arrange
    const first = (await createVmi(sb, 'd16-first')).metadata.resourceVersion;
    for (let i = 0; i < 55; i++) await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'd16-first', body: [{ op: 'add', path: '/metadata/labels', value: { i: String(i) } }] });
    // act
    const w = await collectWatch(sb.kc, VMIS, { resourceVersion: first });
    await w.ended();
    // assert
    assert.equal(w.events[0]?.type, 'ERROR', 'history of 50 events cannot replay 55 changes');
  });

  test('D17: label selector transitions: start matching → ADDED, stop matching → DELETED with previous state', async () => {
    // arrange
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('d17-pod', { labels: { app: 'x' } }) });
    const w = await collectWatch(sb.kc, '/api/v1/namespaces/default/pods', { labelSelector: 'kubevirt.io/migrationJobUID=m1', resourceVersion: String(await currentResourceVersion(sb)) });
    // act
    await patchPod(sb, 'd17-pod', { metadata: { labels: { 'kubevirt.io/migrationJobUID': 'm1' } } });
    await patchPod(sb, 'd17-pod', { metadata: { annotations: { touched: 'yes' } } });
    await patchPod(sb, 'd17-pod', { metadata: { labels: { 'kubevirt.io/migrationJobUID': null } } });
    await w.until(3);
    w.stop();
    // assert
    assert.deepEqual(w.events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED']);
    assert.equal(w.events[2]!.obj.metadata.labels?.['kubevirt.io/migrationJobUID'], 'm1', 'DELETED carries the last matching state');
    assert.ok(BigInt(w.events[2]!.rv) > BigInt(w.events[1]!.rv), 'DELETED is stamped with the new RV');
  });

  test('D17: field selector transitions on spec.nodeName / status.phase', async () => {
    // arrange
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('d17-field') });
    const w = await collectWatch(sb.kc, '/api/v1/pods', { fieldSelector: 'spec.nodeName=node1,status.phase!=Failed', resourceVersion: String(await currentResourceVersion(sb)) });
    // act
    await sb.core.createNamespacedPodBinding({ namespace: 'default', name: 'd17-field', body: { metadata: { name: 'd17-field' }, target: { kind: 'Node', name: 'node1' } } });
    await patchPod(sb, 'd17-field', { status: { phase: 'Failed' } }, 'status');
    await w.until(2);
    w.stop();
    // assert
    assert.deepEqual(w.events.map((e) => e.type), ['ADDED', 'DELETED'], 'bound → ADDED, failed → DELETED');
  });

  test('D18: BOOKMARK only when allowWatchBookmarks=true, carrying the current RV', emulatorOnly('the bookmark period is an emulator knob (30 ms here); kube-apiserver sends one about every minute'), async () => {
    // arrange
    const quiet = await startSandbox({ bookmarkIntervalMs: 30 });
    try {
      const rv = String(await currentResourceVersion(quiet));
      const withBm = await collectWatch(quiet.kc, VMIS, { resourceVersion: rv, allowWatchBookmarks: true });
      const without = await collectWatch(quiet.kc, '/api/v1/namespaces/default/pods', { resourceVersion: rv });
      // act
      await withBm.until(1);
      await new Promise((r) => setTimeout(r, 100));
      withBm.stop();
      without.stop();
      // assert
      assert.equal(withBm.events[0]!.type, 'BOOKMARK');
      assert.equal(withBm.events[0]!.rv, rv, 'the bookmark carries the current RV');
      assert.equal(without.events.length, 0, 'no bookmarks (and no keep-alive data, D20) unless asked');
    } finally {
      await quiet.server.close();
    }
  });

  test('D18: sendInitialEvents=true ends the initial ADDED events with an initial-events-end BOOKMARK', async () => {
    // arrange
    await createVmi(sb, 'd18-init');
    // act
    const w = await collectWatch(sb.kc, VMIS, { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, fieldSelector: 'metadata.name=d18-init' });
    await w.until(2);
    w.stop();
    // assert
    assert.deepEqual(w.events.map((e) => e.type), ['ADDED', 'BOOKMARK']);
    assert.equal((w.events[1]!.obj.metadata as { annotations?: Record<string, string> }).annotations?.['k8s.io/initial-events-end'], 'true');
  });

  test('D19: timeoutSeconds ends the watch with a clean end of stream', async () => {
    // act
    const w = await collectWatch(sb.kc, VMIS, { resourceVersion: String(await currentResourceVersion(sb)), timeoutSeconds: 1 });
    const err = await w.ended();
    // assert
    assert.equal(err, null, 'clean close, which client-node treats as "re-watch", not an error');
  });

  test('D21: a watch from a resourceVersion newer than the server answers ERROR 504 after the wait', emulatorOnly('kube-apiserver v1.37 kept such a watch open without an event for 5 s on the real lane (docs/sandbox-apiserver.md, known gaps); the emulator answers as the watch cache documents'), async () => {
    // arrange
    // The emulator's wait is a knob (20 ms here); kube-apiserver waits its fixed 3 s.
    const fast = REAL ? sb : await startSandbox({ tooLargeWaitMs: 20 });
    try {
      // act
      const w = await collectWatch(fast.kc, VMIS, { resourceVersion: String((await currentResourceVersion(fast)) + 100n) });
      await w.ended();
      // assert
      const status = w.events[0]!.obj as unknown as { code: number; message: string };
      assert.equal(status.code, 504);
      assert.match(status.message, /^Too large resource version/);
    } finally {
      if (fast !== sb) await fast.server.close();
    }
  });

  test('D: a DELETE of a watched object delivers DELETED with the last state', async () => {
    // arrange
    const vmi = await createVmi(sb, 'd-del', { labels: { keep: 'me' } });
    const w = await collectWatch(sb.kc, VMIS, { resourceVersion: vmi.metadata.resourceVersion, labelSelector: 'keep=me' });
    // act
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'd-del' });
    await w.until(1);
    w.stop();
    // assert
    assert.equal(w.events[0]!.type, 'DELETED');
    assert.equal(w.events[0]!.obj.metadata.uid, vmi.metadata.uid);
    await assert.rejects(getVmi(sb, 'd-del'));
  });
});

async function patchPod(sb: Sandbox, name: string, body: object, sub?: 'status'): Promise<RawObject> {
  const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
  const opts = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const args = { namespace: 'default', name, body };
  return (sub ? await sb.core.patchNamespacedPodStatus(args, opts) : await sb.core.patchNamespacedPod(args, opts)) as unknown as RawObject;
}
