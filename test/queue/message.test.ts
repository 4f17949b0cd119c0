/**
 * Key format and message validation: `namespace/name` keys, bare-name keys of cluster-scoped
 * objects, and each controller accepting only the form its registry entry declares.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKey, keyOf, parseKeyMessage, splitKey, dedupId, type KeyMessage } from '../../shared/queue/message.ts';
import { InvalidInputError } from '../../shared/errors.ts';

const CAUSE = { kind: 'Node', namespace: '', name: 'node01', uid: 'u', resourceVersion: '1', event: 'ADDED', seenAt: 1 };

test('keys: namespace/name, a bare cluster-scoped name, either with a cluster prefix', () => {
  const cases: [string, 'namespaced' | 'cluster' | undefined, boolean][] = [
    ['default/vmi-a', undefined, true],
    ['default/vmi-a', 'namespaced', true],
    ['default/vmi-a', 'cluster', false],
    ['node01.example.com', undefined, true],
    ['node01.example.com', 'cluster', true],
    ['node01', 'namespaced', false],
    ['east:node01', 'cluster', true],
    ['east:default/a', 'namespaced', true],
    ['Default/a', undefined, false],
    ['a/b/c', undefined, false],
    ['', undefined, false],
  ];
  for (const [key, scope, want] of cases) assert.equal(isKey(key, scope), want, `${key} (${scope ?? 'any'})`);
});

test('splitKey and keyOf round-trip both forms; a cluster key has no namespace', () => {
  assert.deepEqual(splitKey('default/a'), { namespace: 'default', name: 'a' });
  assert.deepEqual(splitKey('node01'), { namespace: '', name: 'node01' });
  assert.deepEqual(splitKey('east:node01'), { cluster: 'east', namespace: '', name: 'node01' });
  assert.equal(keyOf('default', 'a'), 'default/a');
  assert.equal(keyOf(undefined, 'node01'), 'node01');
  assert.equal(keyOf('', 'node01'), 'node01');
});

test('a namespaced controller refuses a bare-name key, naming the field', () => {
  const body = JSON.stringify({ v: 1, controller: 'vmi', key: 'node01', cause: CAUSE });
  assert.throws(() => parseKeyMessage(body), (err: unknown) => err instanceof InvalidInputError && /key/.test(err.message) && /namespace\/name/.test(err.message));
});

test('dedup ids of a cluster key differ by cause, as namespaced ones do', () => {
  const m = (rv: string): KeyMessage => ({ v: 1, controller: 'vmi', key: 'node01', cause: { ...CAUSE, resourceVersion: rv } });
  assert.notEqual(dedupId(m('1')), dedupId(m('2')));
  assert.equal(dedupId(m('1')), dedupId(m('1')));
});
