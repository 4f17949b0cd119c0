/**
 * The migration controller's policy source over the KubeClient facade, against the sandbox API
 * server through the node:http client (the one the Lambda function uses): policies and namespace
 * labels are read once per TTL, a failed read keeps the last good answer, and a missing namespace
 * has no labels.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import type { MigrationPolicy } from '../../../shared/api/index.ts';
import { createHttpKubeClient, type HttpKubeClient } from '../../../shared/kube/http-client.ts';
import { cachedPolicySource } from '../../../functions/migration/policy-source.ts';

const IDENTITY = 'migration-fn';
const TTL = 5000;

function policy(name: string, tier: string): MigrationPolicy {
  return { apiVersion: 'migrations.kubevirt.io/v1alpha1', kind: 'MigrationPolicy', metadata: { name }, spec: { allowPostCopy: true, selectors: { namespaceSelector: { tier } } } };
}

describe('cachedPolicySource over the facade (node:http client, sandbox API server)', () => {
  let server: ApiServer;
  let kube: HttpKubeClient;
  let admin: { core: CoreV1Api; custom: CustomObjectsApi };
  let clock = 0;
  const now = () => clock;
  const reads = (resource: string) => server.counters.count({ identity: IDENTITY, resource });

  before(async () => {
    server = await startApiServer({ port: 0 });
    kube = createHttpKubeClient({ server: server.url, skipTLSVerify: true, token: async () => IDENTITY });
    admin = { core: server.kubeConfig().makeApiClient(CoreV1Api), custom: server.kubeConfig().makeApiClient(CustomObjectsApi) };
    await admin.core.createNamespace({ body: { metadata: { name: 'team-a', labels: { tier: 'gold' } } } });
    await admin.custom.createClusterCustomObject({ group: 'migrations.kubevirt.io', version: 'v1alpha1', plural: 'migrationpolicies', body: policy('gold', 'gold') });
  });
  after(async () => {
    kube.close();
    await server.close();
  });

  test('policies: one LIST per TTL; a policy added meanwhile shows up after it', async () => {
    // arrange
    const source = cachedPolicySource(kube, TTL, now);
    const before = reads('migrationpolicies');
    // act
    const first = await source.policies();
    await admin.custom.createClusterCustomObject({ group: 'migrations.kubevirt.io', version: 'v1alpha1', plural: 'migrationpolicies', body: policy('silver', 'silver') });
    clock += TTL - 1;
    const cached = await source.policies();
    clock += 1;
    const fresh = await source.policies();
    // assert
    assert.deepEqual(first.map((p) => p.metadata?.name), ['gold']);
    assert.deepEqual(cached.map((p) => p.metadata?.name), ['gold'], 'served from the cache within the TTL');
    assert.deepEqual(fresh.map((p) => p.metadata?.name).sort(), ['gold', 'silver']);
    assert.equal(reads('migrationpolicies') - before, 2, 'two LISTs for three answers');
  });

  test('namespace labels: one GET per namespace per TTL; a missing namespace has none', async () => {
    // arrange
    const source = cachedPolicySource(kube, TTL, now);
    const before = reads('namespaces');
    // act
    const a1 = await source.namespaceLabels('team-a');
    const a2 = await source.namespaceLabels('team-a');
    const missing = await source.namespaceLabels('no-such-namespace');
    // assert
    assert.equal(a1.tier, 'gold');
    assert.deepEqual(a2, a1);
    assert.deepEqual(missing, {});
    assert.equal(reads('namespaces') - before, 2, 'team-a once, the missing one once');
  });

  test('a failed read keeps the last good answer and is asked again next time', async () => {
    // arrange
    const source = cachedPolicySource(kube, TTL, now);
    const good = await source.policies();
    clock += TTL;
    server.faults.failNext(500, 1, { verb: 'list', resource: 'migrationpolicies', identity: IDENTITY });
    const before = reads('migrationpolicies');
    // act
    const during = await source.policies();
    const afterwards = await source.policies();
    // assert
    assert.deepEqual(during.map((p) => p.metadata?.name), good.map((p) => p.metadata?.name), 'the last good answer, not none');
    assert.equal(afterwards.length, good.length);
    assert.equal(reads('migrationpolicies') - before, 2, 'the failed read was not cached as fresh');
  });

  test('a failure before any good answer means no policies, not a failed reconcile', async () => {
    // arrange
    const source = cachedPolicySource(kube, TTL, now);
    server.faults.failNext(500, 1, { verb: 'list', resource: 'migrationpolicies', identity: IDENTITY });
    // act
    const got = await source.policies();
    // assert
    assert.deepEqual(got, []);
  });
});
