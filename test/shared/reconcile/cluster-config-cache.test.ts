/**
 * The cached cluster config (shared/config/cluster-config-cache.ts): one LIST of the KubeVirt
 * CRs per TTL, the last good config kept through a failed read, and `{ fresh: true }` reading the
 * CR now — what a migration's target pod is rendered from right after an upgrade.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeVirt } from '../../../shared/api/index.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { cachedClusterConfig } from '../../../shared/config/cluster-config-cache.ts';

/** A `list` over one KubeVirt CR whose image tag the test changes; counts the reads. */
function fakeKube() {
  const state = { tag: 'v1.9.0', lists: 0, fail: false };
  const kube: Pick<KubeClient, 'list'> = {
    list: (async () => {
      state.lists++;
      if (state.fail) throw new Error('apiserver down');
      return { items: [{ metadata: { name: 'kubevirt', namespace: 'kubevirt' }, spec: { imageTag: state.tag } } as KubeVirt], metadata: {} };
    }) as unknown as KubeClient['list'],
  };
  return { kube, state };
}

test('cachedClusterConfig: cached within the TTL, re-read after it or when asked fresh, the last good one kept on failure', async () => {
  const cases: { name: string; steps: (c: ReturnType<typeof cachedClusterConfig>, s: ReturnType<typeof fakeKube>['state'], clock: { ms: number }) => Promise<string>; want: { image: string; lists: number } }[] = [
    { name: 'within the TTL: one read', steps: async (c) => (await c(), (await c()).launcherImage), want: { image: 'quay.io/kubevirt/virt-launcher:v1.9.0', lists: 1 } },
    { name: 'an upgrade within the TTL: the cached (old) image', steps: async (c, s) => (await c(), (s.tag = 'v1.9.1'), (await c()).launcherImage), want: { image: 'quay.io/kubevirt/virt-launcher:v1.9.0', lists: 1 } },
    { name: 'an upgrade, then a fresh read: the new image', steps: async (c, s) => (await c(), (s.tag = 'v1.9.1'), (await c({ fresh: true })).launcherImage), want: { image: 'quay.io/kubevirt/virt-launcher:v1.9.1', lists: 2 } },
    { name: 'a fresh read refreshes the cache for the next caller', steps: async (c, s) => (await c(), (s.tag = 'v1.9.1'), await c({ fresh: true }), (await c()).launcherImage), want: { image: 'quay.io/kubevirt/virt-launcher:v1.9.1', lists: 2 } },
    { name: 'past the TTL: read again', steps: async (c, s, clock) => (await c(), (s.tag = 'v1.9.1'), (clock.ms += 5000), (await c()).launcherImage), want: { image: 'quay.io/kubevirt/virt-launcher:v1.9.1', lists: 2 } },
    { name: 'a failed fresh read keeps the last good config', steps: async (c, s) => (await c(), (s.fail = true), (await c({ fresh: true })).launcherImage), want: { image: 'quay.io/kubevirt/virt-launcher:v1.9.0', lists: 2 } },
  ];
  for (const t of cases) {
    // arrange
    const { kube, state } = fakeKube();
    const clock = { ms: 0 };
    const config = cachedClusterConfig(kube, 5000, () => clock.ms);
    // act
    const image = await t.steps(config, state, clock);
    // assert
    assert.deepEqual({ image, lists: state.lists }, t.want, t.name);
  }
});
