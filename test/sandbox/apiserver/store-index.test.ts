/**
 * The store's label index (what makes a label-selected list cost the objects it finds): it follows
 * creates, relabels and deletes, and a scan through it answers exactly what a full walk answers;
 * and stored objects are immutable (frozen unless the store is told otherwise).
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ResourceRegistry } from '../../../sandbox/apiserver/resources.ts';
import { parseLabelSelector } from '../../../sandbox/apiserver/selectors.ts';
import { Store } from '../../../sandbox/apiserver/store.ts';
import type { KubeObject } from '../../../sandbox/apiserver/types.ts';

const pods = new ResourceRegistry().byPath('', 'v1', 'pods')!;
const ctx = { identity: 'test', verb: 'create' };
const pod = (name: string, labels: Record<string, string>, ns = 'default'): KubeObject => ({ metadata: { name, namespace: ns, uid: name, labels } });

function names(store: Store, selector: string, ns?: string, indexed = true): string[] {
  const sel = parseLabelSelector(selector);
  return store.scan(pods, ns, (o) => sel.matches(o.metadata.labels), indexed ? sel.equalities : []).map((o) => o.metadata.name!);
}

test('a label-selected scan through the index answers what a full walk answers, after relabels and deletes', () => {
  // arrange
  const store = new Store();
  store.put(pods, pod('a', { app: 'x', tier: 'web' }), ctx);
  store.put(pods, pod('b', { app: 'x', tier: 'db' }), ctx);
  store.put(pods, pod('c', { app: 'y' }), ctx);
  store.put(pods, pod('d', { app: 'x' }, 'other'), ctx);
  // act: b leaves app=x, c joins it, a is deleted
  store.put(pods, pod('b', { app: 'z', tier: 'db' }), { ...ctx, verb: 'update' });
  store.put(pods, pod('c', { app: 'x' }), { ...ctx, verb: 'update' });
  store.remove(pods, 'default', 'a', { ...ctx, verb: 'delete' });
  // assert
  const cases: [string, string | undefined, string[]][] = [
    ['app=x', undefined, ['c', 'd']],
    ['app=x', 'default', ['c']],
    ['app=x,tier=web', undefined, []],
    ['app=z,tier=db', 'default', ['b']],
    ['app in (x),tier!=web', undefined, ['c', 'd']],
    ['app=nobody', undefined, []],
  ];
  for (const [selector, ns, want] of cases) {
    assert.deepEqual(names(store, selector, ns), want, `${selector} in ${ns ?? 'all namespaces'}`);
    assert.deepEqual(names(store, selector, ns, false), want, `${selector} by a full walk`);
  }
  assert.deepEqual(parseLabelSelector('a=1,b==2,c!=3,d in (4),e in (5,6),f').equalities, [['a', '1'], ['b', '2'], ['d', '4']]);
});

test('stored objects are frozen through (a mutation throws), the DELETED state too; freeze: false leaves them as written', () => {
  // arrange
  const store = new Store();
  const loose = new Store(1000, { freeze: false });
  // act
  const a = store.put(pods, pod('a', { app: 'x' }), ctx);
  const last = store.remove(pods, 'default', 'a', { ...ctx, verb: 'delete' })!;
  const b = loose.put(pods, pod('b', { app: 'x' }), ctx);
  // assert
  assert.throws(() => {
    a.metadata.labels!.app = 'y';
  }, TypeError, 'labels of a stored object are read-only');
  assert.throws(() => {
    last.metadata.name = 'z';
  }, TypeError, 'the DELETED event state is read-only');
  assert.equal(last.metadata.labels, a.metadata.labels, 'the DELETED state shares what did not change');
  assert.notEqual(last.metadata.resourceVersion, a.metadata.resourceVersion, 'and carries the delete RV');
  assert.equal(Object.isFrozen(b), false);
});
