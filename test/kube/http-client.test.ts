/**
 * The KubeClient contract (client-contract.ts) against the node:http implementation, plus what
 * only it has: a token source asked per request, and its TLS options (tls.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHttpKubeClient, type HttpKubeClient } from '../../shared/kube/http-client.ts';
import { kubeClientContract } from './client-contract.ts';
import { startRecorder } from './client-wire-contract.ts';
import { PODS, VMIS } from '../../shared/api/resources.ts';

const open: HttpKubeClient[] = [];
after(() => {
  for (const c of open) c.close();
});

kubeClientContract('node:http', (server, identity, options) => {
  const client = createHttpKubeClient({ server: server.url, skipTLSVerify: true, token: async () => identity }, options);
  open.push(client);
  return client;
});

describe('node:http client: bearer token source', () => {
  let recorder: Awaited<ReturnType<typeof startRecorder>>;
  before(async () => {
    recorder = await startRecorder();
  });
  after(() => {
    recorder.server.closeAllConnections();
    recorder.server.close();
  });

  test('asks the token source before every request, so a renewed token is used at once', async () => {
    // arrange: a source that renews on every call, as an expiring EKS token would eventually
    let n = 0;
    const kube = createHttpKubeClient({ server: recorder.url, skipTLSVerify: true, token: async () => `token-${++n}` });
    open.push(kube);
    // act
    await kube.get(VMIS, 'default', 'a');
    await kube.get(VMIS, 'default', 'a');
    // assert
    assert.deepEqual(recorder.seen.slice(-2).map((r) => r.authorization), ['Bearer token-1', 'Bearer token-2']);
  });

  test('without a token source, no Authorization header is sent', async () => {
    const kube = createHttpKubeClient({ server: recorder.url, skipTLSVerify: true });
    open.push(kube);
    await kube.list(PODS, 'default');
    assert.equal(recorder.seen.at(-1)?.authorization, undefined);
  });

  test('a server URL with a path prefix (an API proxy) keeps the prefix', async () => {
    const kube = createHttpKubeClient({ server: `${recorder.url}/k8s/clusters/c-1/`, skipTLSVerify: true });
    open.push(kube);
    await kube.get(PODS, 'default', 'p');
    assert.equal(recorder.seen.at(-1)?.path, '/k8s/clusters/c-1/api/v1/namespaces/default/pods/p');
  });

  test('plain http without skipTLSVerify is refused, as client-node refuses it', () => {
    assert.throws(() => createHttpKubeClient({ server: recorder.url }), /HTTP protocol is not allowed/);
  });
});
