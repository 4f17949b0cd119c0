import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createClock } from '../../../sandbox/clock.ts';
import { collectWatch, createVmi, emulatorOnly, eventually, getVmi, podBody, REAL, settled, startSandbox, statusOf, VMI, type RawObject, type Sandbox } from './support.ts';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const VMIS = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances';

function ownedBy(owner: RawObject, block = true): Record<string, unknown> {
  return { ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: block }] };
}

async function podGone(sb: Sandbox, name: string, ns = 'default'): Promise<boolean> {
  return sb.core.readNamespacedPod({ namespace: ns, name }).then(() => false, () => true);
}

async function vmiGone(sb: Sandbox, name: string): Promise<boolean> {
  return getVmi(sb, name).then(() => false, () => true);
}

describe('kube-api G: deletion, finalizers, GC, namespaces', () => {
  let sb: Sandbox;
  const clock = createClock({ speed: 0 });
  before(async () => {
    sb = await startSandbox({ clock });
  });
  after(() => sb.server.close());

  test('G34: DELETE with finalizers sets deletionTimestamp, keeps the object, answers 200 with it; repeat is a no-op; no new finalizers', async () => {
    // arrange
    await createVmi(sb, 'g34', { finalizers: ['kubevirt.io/virtualMachineControllerFinalize'] });
    // act
    const first = (await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g34' })) as RawObject;
    const again = (await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g34' })) as RawObject;
    const added = await statusOf(sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g34', body: { metadata: { finalizers: ['kubevirt.io/virtualMachineControllerFinalize', 'new'] } } }, merge));
    // assert
    assert.ok(first.metadata.deletionTimestamp, 'deletionTimestamp set');
    assert.equal(first.metadata.deletionGracePeriodSeconds, 0);
    assert.equal(first.metadata.generation, 2, 'the first deletionTimestamp bumps generation');
    assert.equal(again.metadata.resourceVersion, first.metadata.resourceVersion, 'repeated DELETE writes nothing');
    assert.equal(added.code, 422);
    assert.match(added.message, /metadata\.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers \[\]string\{"new"\}/);
  });

  test('G35: emptying the finalizers of a deleting object removes it with only a DELETED event', async () => {
    // arrange
    const v = await createVmi(sb, 'g35', { finalizers: ['f'] });
    const deleting = (await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g35' })) as RawObject;
    const w = await collectWatch(sb.kc, VMIS, { resourceVersion: deleting.metadata.resourceVersion, fieldSelector: 'metadata.name=g35' });
    // act
    await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g35', body: [{ op: 'test', path: '/metadata/finalizers', value: ['f'] }, { op: 'remove', path: '/metadata/finalizers' }] });
    await w.until(1);
    await new Promise((r) => setTimeout(r, 30));
    w.stop();
    // assert
    assert.deepEqual(w.events.map((e) => e.type), ['DELETED'], 'no intermediate MODIFIED');
    assert.equal(w.events[0]!.obj.metadata.uid, v.metadata.uid);
    assert.equal((await statusOf(getVmi(sb, 'g35'))).code, 404);
  });

  test('G36: immediate delete answers a Success Status for CRs and the object for pods', async () => {
    // arrange
    const v = await createVmi(sb, 'g36');
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g36-pod') });
    // act
    const cr = (await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g36' })) as { status: string; details: { name: string; kind: string; uid: string } };
    const pod = await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g36-pod' });
    // assert
    assert.equal(cr.status, 'Success');
    assert.deepEqual(cr.details, { name: 'g36', kind: 'virtualmachineinstances', uid: v.metadata.uid, group: 'kubevirt.io' });
    assert.equal(pod.metadata!.name, 'g36-pod');
  });

  test('G37: a scheduled pod is deleted gracefully (deletionTimestamp = now + grace) until a grace-0 DELETE', async () => {
    // arrange
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g37', {}, { nodeName: 'node1', terminationGracePeriodSeconds: 20 }) });
    const unscheduled = await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g37-unscheduled') });
    // The real server stamps with the wall clock; the emulator with its frozen one.
    const now = REAL ? Date.now() : Math.floor(clock.nowMs() / 1000) * 1000;
    // act
    const deleting = await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g37' });
    await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g37-unscheduled' });
    // assert
    assert.equal(deleting.metadata!.deletionGracePeriodSeconds, 20);
    const lead = new Date(deleting.metadata!.deletionTimestamp!).getTime() - now;
    if (REAL) assert.ok(lead > 18_000 && lead <= 21_000, `deletionTimestamp = now + grace (${lead} ms ahead)`);
    else assert.equal(lead, 20_000, 'deletionTimestamp = now + grace');
    assert.equal(await podGone(sb, 'g37'), false, 'still there during its grace period');
    assert.ok(unscheduled.metadata!.uid && (await podGone(sb, 'g37-unscheduled')), 'unscheduled pods go at once');
    await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g37', gracePeriodSeconds: 0 });
    assert.equal(await podGone(sb, 'g37'), true, "the kubelet's grace-0 DELETE removes it");
  });

  test('G37: with a DeleteOptions body the query is ignored: gracePeriodSeconds=0 beside preconditions in the body deletes nothing at once', async () => {
    // arrange
    const pod = await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g37-body', {}, { nodeName: 'node1', terminationGracePeriodSeconds: 20 }) });
    const uid = pod.metadata!.uid!;
    // act
    const queryIgnored = await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g37-body', gracePeriodSeconds: 0, body: { preconditions: { uid } } });
    const stillThere = await podGone(sb, 'g37-body');
    await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g37-body', body: { gracePeriodSeconds: 0, preconditions: { uid } } });
    // assert
    assert.equal(queryIgnored.metadata!.deletionGracePeriodSeconds, 20, 'the default grace: the query was not read');
    assert.equal(stillThere, false);
    assert.equal(await podGone(sb, 'g37-body'), true, 'grace 0 in the body removes it');
  });

  test('G37: grace expiry removes a deleting pod when no kubelet does', emulatorOnly('plays the kubelet\'s grace expiry on the emulator\'s frozen clock (a real cluster needs a kubelet for it)'), async () => {
    // arrange
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g37-b', {}, { nodeName: 'node1' }) });
    // act
    await sb.core.deleteNamespacedPod({ namespace: 'default', name: 'g37-b', gracePeriodSeconds: 5 });
    const during = await podGone(sb, 'g37-b');
    clock.advance(5_000);
    // assert
    assert.equal(during, false, 'kept during its grace period');
    assert.equal(await podGone(sb, 'g37-b'), true, 'grace expiry removes it');
  });

  test('G38/G39: Background: deleting a VMI garbage-collects its launcher pod (matched by uid)', async () => {
    // arrange
    const vmi = await createVmi(sb, 'g39');
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g39-pod', ownedBy(vmi)) });
    // act
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g39' });
    // assert
    await settled(sb, () => podGone(sb, 'g39-pod'), 'the launcher pod garbage-collected');
  });

  test('G39: an owner re-created under the same name with a new uid counts as absent; dangling refs are stripped when other owners remain', async () => {
    // arrange
    const old = await createVmi(sb, 'g39-re');
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g39-re' });
    const fresh = await createVmi(sb, 'g39-re');
    const other = await createVmi(sb, 'g39-other');
    const refs = (o: RawObject, controller: boolean) => (ownedBy(o, false) as { ownerReferences: object[] }).ownerReferences.map((r) => ({ ...r, controller }));
    // act
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g39-orphaned', ownedBy(old)) });
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g39-two', { ownerReferences: [...refs(old, true), ...refs(other, false)] }) });
    const ownersOfTwo = async () => (await sb.core.readNamespacedPod({ namespace: 'default', name: 'g39-two' })).metadata!.ownerReferences!.map((r) => r.uid);
    // assert
    assert.ok(fresh.metadata.uid !== old.metadata.uid);
    await settled(sb, () => podGone(sb, 'g39-orphaned'), 'the old uid is gone even though the name exists');
    await eventually(async () => (await ownersOfTwo()).length === 1, 'the dangling reference stripped');
    assert.deepEqual(await ownersOfTwo(), [other.metadata.uid]);
  });

  test('G38: Foreground: the owner waits with foregroundDeletion until blocking dependents are gone', async () => {
    // arrange
    const vmi = await createVmi(sb, 'g38-fg');
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g38-fg-pod', { ...ownedBy(vmi), finalizers: ['example.com/hold'] }) });
    // act
    const deleting = (await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g38-fg', propagationPolicy: 'Foreground' })) as RawObject;
    const podDeleting = async () => Boolean((await sb.core.readNamespacedPod({ namespace: 'default', name: 'g38-fg-pod' })).metadata!.deletionTimestamp);
    await settled(sb, podDeleting, 'the dependent deleted first');
    const held = await getVmi(sb, 'g38-fg');
    await sb.core.patchNamespacedPod({ namespace: 'default', name: 'g38-fg-pod', body: { metadata: { finalizers: null } } }, merge);
    // assert
    assert.deepEqual(deleting.metadata.finalizers, ['foregroundDeletion']);
    assert.ok(held.metadata.deletionTimestamp, 'owner still there while a blocking dependent exists');
    await settled(sb, () => vmiGone(sb, 'g38-fg'), 'owner removed after its dependents');
  });

  test('G38: Orphan: dependents lose the ownerReference and survive', async () => {
    // arrange
    const vmi = await createVmi(sb, 'g38-or');
    await sb.core.createNamespacedPod({ namespace: 'default', body: podBody('g38-or-pod', ownedBy(vmi)) });
    // act
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'g38-or', propagationPolicy: 'Orphan' });
    // assert
    await settled(sb, () => vmiGone(sb, 'g38-or'), 'the owner removed once its dependents are orphaned');
    const pod = await sb.core.readNamespacedPod({ namespace: 'default', name: 'g38-or-pod' });
    assert.equal(pod.metadata!.ownerReferences, undefined);
  });

  test('G40: namespaces: missing → 404, terminating → 403, deletion empties it then removes it', async () => {
    // arrange
    await sb.core.createNamespace({ body: { metadata: { name: 'g40' } } });
    await createVmi(sb, 'in-g40', { finalizers: ['hold'] }, 'g40');
    const missing = await statusOf(createVmi(sb, 'x', {}, 'nope'));
    // act
    const ns = (await sb.core.deleteNamespace({ name: 'g40' })) as unknown as { status?: { phase?: string } };
    const forbidden = await statusOf(createVmi(sb, 'late', {}, 'g40'));
    // The namespace controller deletes the content; the VMI stays while its finalizer does.
    await settled(sb, async () => Boolean((await getVmi(sb, 'in-g40', 'g40')).metadata.deletionTimestamp), 'the namespace content deleted');
    const stillThere = await sb.core.readNamespace({ name: 'g40' });
    await sb.co.patchNamespacedCustomObject({ ...VMI, namespace: 'g40', name: 'in-g40', body: { metadata: { finalizers: null } } }, merge);
    // assert
    assert.deepEqual([missing.code, missing.message], [404, 'namespaces "nope" not found']);
    assert.equal(ns.status!.phase, 'Terminating');
    assert.equal(forbidden.code, 403);
    assert.match(forbidden.message, /unable to create new content in namespace g40 because it is being terminated/);
    assert.equal(stillThere.status!.phase, 'Terminating', 'waits for content with finalizers');
    await eventually(async () => sb.core.readNamespace({ name: 'g40' }).then(() => false, () => true), 'namespace removal');
  });

  test('G: scenario without controller: pod owned by a VMI is garbage-collected when the VMI is deleted', async () => {
    // arrange
    const vmi = await createVmi(sb, 'scenario');
    const pod = await sb.core.createNamespacedPod({ namespace: 'default', body: { metadata: { generateName: 'virt-launcher-scenario-', labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': vmi.metadata.uid }, ...ownedBy(vmi) }, spec: { containers: [{ name: 'compute', image: 'virt-launcher' }] } } });
    // act
    await sb.co.deleteNamespacedCustomObject({ ...VMI, namespace: 'default', name: 'scenario' });
    // assert
    await eventually(() => podGone(sb, pod.metadata!.name!), 'launcher pod garbage collection');
    const gcWrites = sb.server.audit.query({ resource: 'pods', name: pod.metadata!.name!, type: 'DELETED' });
    assert.equal(gcWrites[0]?.identity, 'system:serviceaccount:kube-system:generic-garbage-collector');
  });
});
