/** The relay's whole copies of viewed objects, and the answers it can give exactly (functions/relay/view-store.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VIEW_SETTLE_MS, ViewStore } from '../../../functions/relay/view-store.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import type { WatchedObject } from '../../../shared/relay/route.ts';

const pod = (name: string, labels: Record<string, string>, ns = 'ns'): WatchedObject => ({ metadata: { name, namespace: ns, labels, resourceVersion: '5', managedFields: [{ manager: 'x' }] } as never });

test('GETs and label-selected LISTs are answered from what the watches delivered, without managedFields', () => {
  // arrange
  const store = new ViewStore([{ resource: PODS }, { resource: VMIS }]);
  store.apply('Pod', 'ADDED', pod('p1', { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': 'u1' }));
  store.apply('Pod', 'ADDED', pod('p2', { 'kubevirt.io': 'hotplug-disk', 'kubevirt.io/created-by': 'u1' }));
  store.apply('Pod', 'ADDED', pod('p3', { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': 'u2' }));
  store.apply('Pod', 'ADDED', pod('p4', { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': 'u1' }, 'other'));
  store.apply('Pod', 'DELETED', pod('p2', {}));
  // act
  const list = store.answer({ resource: PODS, namespace: 'ns', labelSelector: 'kubevirt.io,kubevirt.io/created-by=u1' });
  const get = store.answer({ resource: PODS, namespace: 'ns', name: 'p3' });
  const absent = store.answer({ resource: VMIS, namespace: 'ns', name: 'nope' });
  // assert
  assert.deepEqual(list?.items.map((o) => (o as WatchedObject).metadata?.name), ['p1'], 'the namespace, the selector, deletions');
  assert.equal((get?.items[0] as { metadata: { managedFields?: unknown } }).metadata.managedFields, undefined, 'managedFields are not kept');
  assert.deepEqual(absent?.items, [], 'an absent object is answered as such (the function decides what that proves)');
  assert.equal(store.size, 3);
});

test('a LIST is answered only when it asks at least what the relay watches (else the store cannot be complete)', () => {
  // arrange: pods watched with the `kubevirt.io` label only
  const store = new ViewStore([{ resource: PODS, watchSelector: 'kubevirt.io' }]);
  store.apply('Pod', 'ADDED', pod('p1', { 'kubevirt.io': 'virt-launcher', app: 'x' }));
  // act / assert
  assert.equal(store.answer({ resource: PODS, namespace: 'ns', labelSelector: 'app=x' }), undefined, 'pods without kubevirt.io may match app=x too');
  assert.equal(store.answer({ resource: PODS, namespace: 'ns', labelSelector: 'kubevirt.io,app=x' })?.items.length, 1);
  assert.equal(store.answer({ resource: PODS, namespace: 'ns', labelSelector: 'app!=y' }), undefined, 'not a simple selector');
  assert.equal(store.answer({ resource: VMIS, namespace: 'ns', name: 'a' }), undefined, 'a resource the store does not keep');
});

test('a view goes out only when every answered copy is as new as its newest object: by the versions its watch delivered, or by a stream open long enough', () => {
  // arrange: the VMI written at 20 (after its pod was seen bound at 15); the pods' watch broke at 12
  const store = new ViewStore([{ resource: PODS }, { resource: VMIS }]);
  const vmi = { metadata: { name: 'v', namespace: 'ns', resourceVersion: '20' } } as WatchedObject;
  store.apply('VirtualMachineInstance', 'MODIFIED', vmi);
  store.apply('Pod', 'ADDED', pod('p1', { 'kubevirt.io': 'virt-launcher' }));
  store.progress('VirtualMachineInstance', '20', true, 0);
  store.progress('Pod', '12', false, 0);
  const answers = () => [store.answer({ resource: VMIS, namespace: 'ns', name: 'v' })!, store.answer({ resource: PODS, namespace: 'ns', labelSelector: 'kubevirt.io' })!];
  // act / assert
  assert.equal(store.consistent(answers(), 5000), false, 'the pods may not show what the VMI was decided on');
  store.progress('Pod', '21', false, 5000);
  assert.equal(store.consistent(answers(), 5000), true, 'the pods watch delivered past the VMI');
  store.progress('Pod', '12', true, 5000);
  assert.equal(store.consistent(answers(), 5000 + VIEW_SETTLE_MS - 1), false, 'a new stream, not yet settled');
  assert.equal(store.consistent(answers(), 5000 + VIEW_SETTLE_MS), true, 'a stream open long enough: quiet, not behind');
  store.progress('Pod', undefined, false, 7000);
  assert.equal(store.consistent(answers(), 9000), false, 'a relist in progress: no version describes the copy');
  store.progress('Pod', '30', false, 9000);
  store.apply('Pod', 'MODIFIED', { metadata: { name: 'p1', namespace: 'ns', labels: { 'kubevirt.io': 'virt-launcher' }, resourceVersion: 'opaque' } } as WatchedObject);
  assert.equal(store.consistent(answers(), 9000), false, 'a version that is not a number cannot be ordered');
});

test('a view is stamped with where the store was in its history: later stamps of one store are higher, another store is another relay', () => {
  // arrange
  const store = new ViewStore([{ resource: PODS }]);
  const other = new ViewStore([{ resource: PODS }]);
  // act
  const before = store.stamp();
  store.apply('Pod', 'ADDED', pod('p1', {}));
  store.apply('VirtualMachineInstance', 'ADDED', pod('v1', {}));
  const after = store.stamp();
  // assert
  assert.equal(after.seq, before.seq + 1, 'one applied event of a viewed kind (an unviewed kind is not history the views show)');
  assert.equal(after.relay, before.relay);
  assert.notEqual(other.stamp().relay, store.stamp().relay, 'each relay process stamps as itself');
});
