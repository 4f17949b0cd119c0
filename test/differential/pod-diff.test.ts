/**
 * The differential test's comparison itself (pod-diff.ts): what the normalisation removes, what it
 * must keep, and how differences are reported. Pure: no sandbox, no oracle.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { diffPods, diffValues, formatDifferences, normalisePod, QEMU_TIMEOUT_PLACEHOLDER, substituteUids, TOKEN_VOLUME } from './pod-diff.ts';

function pod(over: { args?: string[]; volumes?: { name: string }[]; labels?: Record<string, string> } = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'virt-launcher-a-x1', generateName: 'virt-launcher-a-', uid: 'u1', resourceVersion: '7', creationTimestamp: new Date(0), labels: over.labels ?? { 'kubevirt.io': 'virt-launcher' } },
    spec: {
      nodeName: 'node-1',
      containers: [{ name: 'compute', args: over.args ?? ['--qemu-timeout', '300s', '--name', 'a'] }],
      volumes: over.volumes ?? [{ name: 'private' }, { name: 'public' }],
    },
    status: { phase: 'Pending' },
  };
}

test('normalisePod drops the server\'s bookkeeping, the binding and the status, and keeps everything else', () => {
  // arrange
  const p = pod();
  // act
  const n = normalisePod(p);
  // assert
  assert.deepEqual(n.metadata, { generateName: 'virt-launcher-a-', labels: { 'kubevirt.io': 'virt-launcher' } });
  assert.equal(n.spec?.nodeName, undefined);
  assert.equal(n.status, undefined);
  assert.deepEqual(n.spec?.volumes, [{ name: 'private' }, { name: 'public' }]);
  assert.equal(p.metadata?.name, 'virt-launcher-a-x1', 'the input is not modified');
});

test('the qemu timeout is normalised only inside 240–359 s', () => {
  const table: [string, string][] = [
    ['240s', QEMU_TIMEOUT_PLACEHOLDER],
    ['359s', QEMU_TIMEOUT_PLACEHOLDER],
    ['360s', '360s'],
    ['239s', '239s'],
    ['abc', 'abc'],
  ];
  for (const [value, want] of table) {
    // arrange / act
    const n = normalisePod(pod({ args: ['--qemu-timeout', value, '--name', 'a'] }));
    // assert
    assert.equal(n.spec?.containers[0]?.args?.[1], want, `--qemu-timeout ${value}`);
  }
});

test('diffPods: identical pods but for name, UID, node and timeout jitter have no differences', () => {
  // arrange
  const a = pod({ args: ['--qemu-timeout', '251s', '--name', 'a'] });
  const b = pod({ args: ['--qemu-timeout', '333s', '--name', 'a'] });
  b.metadata!.name = 'virt-launcher-a-zz';
  b.metadata!.uid = 'u2';
  delete b.spec!.nodeName;
  // act / assert
  assert.deepEqual(diffPods(a, b), []);
});

test('named arrays are compared by name, and their order on its own', () => {
  // arrange
  const ours = pod({ volumes: [{ name: 'public' }, { name: 'private' }, { name: 'extra' }] });
  const theirs = pod({ volumes: [{ name: 'private' }, { name: 'public' }] });
  // act
  const d = diffPods(ours, theirs);
  // assert
  assert.deepEqual(d, [
    { path: 'spec.volumes[extra]', ours: { name: 'extra' }, kubevirt: undefined },
    { path: 'spec.volumes(order)', ours: ['public', 'private'], kubevirt: ['private', 'public'] },
  ]);
});

test('unnamed arrays are compared by index; leaves report both values', () => {
  // act
  const d = diffValues({ a: [1, 2], b: { c: 'x' } }, { a: [1, 3, 4], b: { c: 'y', d: true } });
  // assert
  assert.deepEqual(d, [
    { path: 'a[1]', ours: 2, kubevirt: 3 },
    { path: 'a[2]', ours: undefined, kubevirt: 4 },
    { path: 'b.c', ours: 'x', kubevirt: 'y' },
    { path: 'b.d', ours: undefined, kubevirt: true },
  ]);
});

test('substituteUids replaces the oracle\'s UIDs everywhere they occur', () => {
  // arrange
  const p = pod({ labels: { 'kubevirt.io/created-by': 'old-uid', 'pr.kubevirt.io/pvc-old': '' }, args: ['--uid', 'old-uid'] });
  // act
  const s = substituteUids(p, new Map([['old-uid', 'new-uid'], ['pvc-old', 'pvc-new']]));
  // assert
  assert.deepEqual(s.metadata?.labels, { 'kubevirt.io/created-by': 'new-uid', 'pr.kubevirt.io/pvc-new': '' });
  assert.deepEqual(s.spec?.containers[0]?.args, ['--uid', 'new-uid']);
});

test('formatDifferences names the path, both values, absent sides, and cuts long lists', () => {
  // act
  const text = formatDifferences([{ path: 'spec.x', ours: 1, kubevirt: undefined }, { path: 'spec.y', ours: 'a', kubevirt: 'b' }], 1);
  // assert
  assert.equal(text, '  spec.x: ours 1 vs KubeVirt\'s (absent)\n  … and 1 more');
});

test('the service-account token volume loses its random suffix, on volumes and mounts; other names stay', () => {
  // arrange
  const p = pod({ volumes: [{ name: 'kube-api-access-x7k2p' }, { name: 'kube-api-access-config' }] });
  p.spec!.containers[0]!.volumeMounts = [{ name: 'kube-api-access-x7k2p', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }];
  // act
  const n = normalisePod(p);
  // assert
  assert.deepEqual(n.spec?.volumes?.map((v) => v.name), [TOKEN_VOLUME, 'kube-api-access-config']);
  assert.equal(n.spec?.containers[0]?.volumeMounts?.[0]?.name, TOKEN_VOLUME);
});
