/**
 * client-node API clients that keep their connections (shared/kube/connections.ts): against a
 * plain HTTP server with skipTLSVerify (the sandbox's kubeconfig) and an https server with its CA
 * (a real cluster's), the server counts the connections it accepted and sees each request's
 * credentials. Without openssl the https case skips, saying so.
 */
import assert from 'node:assert/strict';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { after, describe, test } from 'node:test';
import { CustomObjectsApi, KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { VMIS } from '../../shared/api/resources.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import { pooledApiClient } from '../../shared/kube/connections.ts';
import { selfSigned } from './tls-fixture.ts';

interface Seen {
  connections: number;
  auth: (string | undefined)[];
}

const servers: Server[] = [];
after(() => {
  for (const s of servers) {
    (s as unknown as { closeAllConnections(): void }).closeAllConnections();
    s.close();
  }
});

function answer(seen: Seen) {
  return (req: IncomingMessage, res: ServerResponse) => {
    seen.auth.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"a","namespace":"default"}}');
  };
}

async function listen(server: Server, seen: Seen, event: 'connection' | 'secureConnection'): Promise<number> {
  server.on(event, () => seen.connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function kubeConfig(cluster: Cluster, user: Omit<User, 'name'>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [cluster], users: [{ name: 'u', ...user }], contexts: [{ name: 'x', cluster: cluster.name, user: 'u' }], currentContext: 'x' });
  return kc;
}

describe('kept connections for client-node API clients', () => {
  test('sandbox kubeconfig (http, skipTLSVerify, token): requests in sequence and at once reuse connections', async () => {
    // arrange
    const seen: Seen = { connections: 0, auth: [] };
    const port = await listen(createHttp(answer(seen)), seen, 'connection');
    const kube = createKubeClient(kubeConfig({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { token: 'reconciler' }));
    // act: ten at once, then twenty one after another
    await Promise.all(Array.from({ length: 10 }, () => kube.get(VMIS, 'default', 'a')));
    const afterBurst = seen.connections;
    for (let i = 0; i < 20; i++) assert.equal((await kube.get(VMIS, 'default', 'a'))?.metadata?.name, 'a');
    // assert
    assert.ok(afterBurst <= 10, `ten requests at once opened ${afterBurst} connections`);
    assert.equal(seen.connections, afterBurst, 'requests after the burst open no connection of their own');
    assert.equal(seen.auth.length, 30);
    assert.ok(seen.auth.every((a) => a === 'Bearer reconciler'), `every request carries the token: ${[...new Set(seen.auth)].join(', ')}`);
  });

  test("against the sandbox API server's 2 s keep-alive hint, connections are still reused", async () => {
    // arrange: the hint the sandbox sends (Keep-Alive: timeout=2), which undici's default margin turns into none
    const seen: Seen = { connections: 0, auth: [] };
    const server = createHttp(answer(seen));
    server.keepAliveTimeout = 2000;
    const port = await listen(server, seen, 'connection');
    const kube = createKubeClient(kubeConfig({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { token: 't' }));
    // act: requests in sequence, a little apart
    for (let i = 0; i < 8; i++) {
      await kube.get(VMIS, 'default', 'a');
      await new Promise((r) => setTimeout(r, 50));
    }
    // assert
    assert.ok(seen.connections <= 2, `8 requests opened ${seen.connections} connections`);
  });

  test('basic auth users keep their Authorization header', async () => {
    const seen: Seen = { connections: 0, auth: [] };
    const port = await listen(createHttp(answer(seen)), seen, 'connection');
    const api = pooledApiClient(kubeConfig({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { username: 'admin', password: 'pw' }), CustomObjectsApi);
    await api.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances', name: 'a' });
    assert.deepEqual(seen.auth, [`Basic ${Buffer.from('admin:pw').toString('base64')}`]);
  });

  test('what it mends: client-node makeApiClient opens a connection per request (if this fails, client-node keeps them itself now and connections.ts can go)', async () => {
    const seen: Seen = { connections: 0, auth: [] };
    const port = await listen(createHttp(answer(seen)), seen, 'connection');
    const api = kubeConfig({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }, { token: 't' }).makeApiClient(CustomObjectsApi);
    for (let i = 0; i < 5; i++) await api.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances', name: 'a' });
    assert.equal(seen.connections, 5);
  });

  const pair = selfSigned();
  test('a real cluster kubeconfig (https, its CA): a TLS handshake or two for thirty requests, the CA verified', { skip: pair ? false : 'openssl is not available to make a test certificate' }, async () => {
    // arrange
    const seen: Seen = { connections: 0, auth: [] };
    const port = await listen(createHttps({ key: pair?.key, cert: pair?.cert }, answer(seen)), seen, 'secureConnection');
    const server = `https://127.0.0.1:${port}`;
    const kube = createKubeClient(kubeConfig({ name: 'c', server, caData: Buffer.from(pair?.cert ?? '').toString('base64'), skipTLSVerify: false }, { token: 'tok' }));
    // act
    for (let i = 0; i < 30; i++) await kube.get(VMIS, "default", "a");
    // assert
    // undici opens a second connection for the second request (the first is not back in its pool
    // yet when the next request starts, right after the answer is read); then both are reused.
    assert.ok(seen.connections <= 2, `30 requests in sequence: ${seen.connections} TLS handshakes`);
    assert.ok(seen.auth.every((a) => a === 'Bearer tok'));
    // and a kubeconfig without the CA is refused, not silently trusted
    const untrusted = createKubeClient(kubeConfig({ name: 'c', server, skipTLSVerify: false }, { token: 'tok' }));
    await assert.rejects(untrusted.get(VMIS, 'default', 'a'));
  });
});
