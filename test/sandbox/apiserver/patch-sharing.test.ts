/**
 * The emulator's three patch kinds leave the stored object as it was (it is frozen in the tests'
 * store, and watchers and the response share it) and share with it every subtree the patch does
 * not touch — what lets a write skip copying, re-pruning and re-comparing those subtrees.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyJsonPatch } from '../../../sandbox/apiserver/json-patch.ts';
import { applyMergePatch } from '../../../sandbox/apiserver/merge-patch.ts';
import { applyStrategicMergePatch } from '../../../sandbox/apiserver/strategic-merge.ts';
import { deepFreeze } from '../../../sandbox/apiserver/types.ts';

const stored = () =>
  deepFreeze({
    metadata: { name: 'p', labels: { a: '1' } },
    spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'v' }] },
    status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
  });

const cases: Array<{ kind: string; apply: (doc: ReturnType<typeof stored>) => unknown }> = [
  { kind: 'merge', apply: (doc) => applyMergePatch(doc, { status: { phase: 'Running' } }) },
  { kind: 'strategic merge', apply: (doc) => applyStrategicMergePatch(doc, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }) },
  {
    kind: 'json',
    apply: (doc) =>
      applyJsonPatch(doc, [
        { op: 'replace', path: '/status/phase', value: 'Running' },
        { op: 'replace', path: '/status/conditions/0/status', value: 'True' },
      ]),
  },
];

for (const c of cases) {
  test(`a ${c.kind} patch of a status leaves the frozen stored object alone and shares its metadata and spec`, () => {
    // arrange
    const doc = stored();
    const before = JSON.stringify(doc);
    // act
    const out = c.apply(doc) as ReturnType<typeof stored>;
    // assert
    assert.equal(JSON.stringify(doc), before, 'the stored object is unchanged');
    assert.equal(out.status.phase, 'Running');
    assert.notEqual(out.status, doc.status, 'the patched path is new');
    assert.equal(out.spec, doc.spec, 'spec is shared');
    assert.equal(out.metadata, doc.metadata, 'metadata is shared');
  });
}

test('a json patch that fails half-way leaves the stored object alone', () => {
  // arrange
  const doc = stored();
  const before = JSON.stringify(doc);
  // act + assert
  assert.throws(() => applyJsonPatch(doc, [{ op: 'replace', path: '/spec/containers/0/image', value: 'y' }, { op: 'remove', path: '/spec/nothing' }]));
  assert.equal(JSON.stringify(doc), before);
});
