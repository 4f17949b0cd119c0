/**
 * KubeVirt's one-way label/annotation sync (shared/template/dynamic-sync.ts): exact keys and
 * prefix patterns made equal on the target, set or removed; a bare `*` syncs nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { metadataMapOps, syncKeys } from '../../shared/template/dynamic-sync.ts';

describe('syncKeys', () => {
  const table: { name: string; patterns: string[]; source: Record<string, string>; target: Record<string, string>; want: Record<string, string> | undefined }[] = [
    { name: 'a key the source has is set', patterns: ['a'], source: { a: '1' }, target: { x: 'y' }, want: { x: 'y', a: '1' } },
    { name: 'a changed value is replaced', patterns: ['a'], source: { a: '2' }, target: { a: '1' }, want: { a: '2' } },
    { name: 'a key the source lost is removed', patterns: ['a'], source: {}, target: { a: '1', b: '2' }, want: { b: '2' } },
    { name: 'equal: nothing to do', patterns: ['a'], source: { a: '1' }, target: { a: '1' }, want: undefined },
    { name: 'keys outside the patterns are left alone', patterns: ['a'], source: { b: '9' }, target: { b: '1' }, want: undefined },
    { name: 'a prefix pattern syncs every key under it, both ways', patterns: ['vendor.io/*'], source: { 'vendor.io/x': '1' }, target: { 'vendor.io/y': '2', other: 'o' }, want: { 'vendor.io/x': '1', other: 'o' } },
    { name: 'a bare * syncs nothing', patterns: ['*', ''], source: { a: '1' }, target: {}, want: undefined },
  ];
  for (const row of table) {
    test(row.name, () => {
      // act
      const got = syncKeys(row.patterns, row.source, row.target);
      // assert
      assert.deepEqual(got, row.want);
    });
  }
});

describe('metadataMapOps', () => {
  test('no map yet: one add; a map: test what was read, then replace', () => {
    // act
    const fresh = metadataMapOps('labels', undefined, { a: '1' });
    const existing = metadataMapOps('annotations', { a: '0' }, { a: '1' });
    // assert
    assert.deepEqual(fresh, [{ op: 'add', path: '/metadata/labels', value: { a: '1' } }]);
    assert.deepEqual(existing, [{ op: 'test', path: '/metadata/annotations', value: { a: '0' } }, { op: 'replace', path: '/metadata/annotations', value: { a: '1' } }]);
  });
});
