/**
 * The reads the render's cluster facts make (shared/template/read-cluster-facts.ts): the
 * automatic-limits quota list is a cache-grade read (resourceVersion 0, what KubeVirt's informer
 * gives its template service), so a VMI message's view may answer it and the API server answers
 * it from its watch cache; the namespace is read only when its labels matter.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { resourceName } from '../../shared/api/resources.ts';
import { clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { namespaceLimits } from '../../shared/template/read-cluster-facts.ts';

test('namespaceLimits lists the quotas at resourceVersion 0 and reads no namespace when no label matters', async () => {
  // arrange
  const calls: string[] = [];
  const kube = {
    list: async (res: Parameters<KubeClient['list']>[0], namespace: string | undefined, options?: { resourceVersion?: string }) => {
      calls.push(`list ${resourceName(res)} ${namespace} rv=${options?.resourceVersion}`);
      return { items: [], resourceVersion: '1' };
    },
    get: async (res: Parameters<KubeClient['get']>[0], namespace: string | undefined, name: string) => {
      calls.push(`get ${resourceName(res)} ${namespace ?? ''}/${name}`);
      return undefined;
    },
  } as unknown as Pick<KubeClient, 'get' | 'list'>;
  const vmi = { metadata: { name: 'v', namespace: 'ns' }, spec: { domain: { devices: {} } } } as VirtualMachineInstance;
  // act
  await namespaceLimits(kube, vmi, clusterConfigFromKubeVirt());
  // assert
  assert.deepEqual(calls, ['list resourcequotas ns rv=0']);
});
