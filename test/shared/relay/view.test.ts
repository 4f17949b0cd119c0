/** A message's view: simple selectors, what counts as an answer, and the shape check at the queue's edge (shared/relay/view.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerOf, checkView, meetsRequirements, parseSimpleSelector, type MessageView } from '../../../shared/relay/view.ts';

test('simple selectors: existence and equality terms parse; anything else is not answered', () => {
  const rows: [string | undefined, string][] = [
    [undefined, '[]'],
    ['', '[]'],
    ['kubevirt.io', '[{"key":"kubevirt.io"}]'],
    ['kubevirt.io,kubevirt.io/created-by=u-1', '[{"key":"kubevirt.io"},{"key":"kubevirt.io/created-by","value":"u-1"}]'],
    ['a==b', '[{"key":"a","value":"b"}]'],
    ['a!=b', 'undefined'],
    ['!a', 'undefined'],
    ['a in (x,y)', 'undefined'],
  ];
  for (const [selector, want] of rows) assert.equal(JSON.stringify(parseSimpleSelector(selector)) ?? 'undefined', want, `${selector}`);
  assert.equal(meetsRequirements(parseSimpleSelector('a,b=c')!, { a: '', b: 'c' }), true);
  assert.equal(meetsRequirements(parseSimpleSelector('a,b=c')!, { b: 'c' }), false, 'an existence term needs the label');
  assert.equal(meetsRequirements(parseSimpleSelector('b=c')!, { b: 'd' }), false);
});

test('an answer is a GET or LIST the view holds with items — or one it marked: the empty answer is an answer', () => {
  // arrange
  const view: MessageView = {
    reads: [
      { resource: 'virtualmachineinstances.kubevirt.io', namespace: 'ns', name: 'a', items: [{ metadata: { name: 'a' } }] },
      { resource: 'pods', namespace: 'ns', labelSelector: 'x=1', items: [] },
      { resource: 'pods', namespace: 'ns', labelSelector: 'x=2', items: [], trustEmptyWith: 'virtualmachineinstances.kubevirt.io/ns/a' },
      { resource: 'virtualmachineinstances.kubevirt.io', namespace: 'ns', name: 'gone', items: [] },
    ],
  };
  // act / assert
  assert.equal(answerOf(view, 'virtualmachineinstances.kubevirt.io', 'ns', { name: 'a' })?.length, 1);
  assert.equal(answerOf(view, 'virtualmachineinstances.kubevirt.io', 'other', { name: 'a' }), undefined, 'another namespace');
  assert.equal(answerOf(view, 'virtualmachineinstances.kubevirt.io', 'ns', { name: 'gone' }), undefined, 'an absent object proves nothing');
  assert.equal(answerOf(view, 'pods', 'ns', { labelSelector: 'x=1' }), undefined, 'an empty list proves nothing');
  assert.equal(answerOf(view, 'pods', 'ns', { labelSelector: 'x=2' }), undefined, 'marked, but the object it depends on is not served');
  assert.deepEqual(answerOf(view, 'pods', 'ns', { labelSelector: 'x=2' }, (id) => id === 'virtualmachineinstances.kubevirt.io/ns/a'), [], 'marked, and that object is served: the empty list is an answer');
  assert.equal(answerOf(view, 'pods', 'ns', { labelSelector: 'x=3' }), undefined, 'a read the view does not hold');
  assert.equal(answerOf(view, 'pods', 'ns', {}), undefined, 'the whole namespace is another read');
});

test('a malformed view names what is wrong', () => {
  const rows: [unknown, RegExp][] = [
    [{}, /reads array/],
    [{ reads: [1] }, /reads\[0\] must be an object/],
    [{ reads: [{ resource: 'pods' }] }, /reads\[0\] needs resource and namespace/],
    [{ reads: [{ resource: 'pods', namespace: 'ns', items: [1] }] }, /items must be an array of objects/],
    [{ reads: [{ resource: 'pods', namespace: 'ns', items: [], trustEmptyWith: true }] }, /trustEmptyWith must be a string/],
  ];
  for (const [raw, want] of rows) assert.throws(() => checkView(raw), want);
});
