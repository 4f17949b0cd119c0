/**
 * TLS options of the node:http client against an https server on 127.0.0.1 whose self-signed
 * certificate is made at test time (tls-fixture.ts); without openssl the suite is skipped and
 * says so.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { KubeTransientError } from '../../shared/kube/errors.ts';
import { createHttpKubeClient, type HttpKubeClient } from '../../shared/kube/http-client.ts';
import { rejection } from './client-contract.ts';
import { VMIS } from '../../shared/api/resources.ts';
import { selfSigned } from './tls-fixture.ts';

const pair = selfSigned();

describe('node:http client over TLS', { skip: pair ? false : 'openssl is not available to make a test certificate' }, () => {
  let server: Server;
  let url = '';
  let tlsConnections = 0;
  const clients: HttpKubeClient[] = [];
  const client = (c: Omit<Parameters<typeof createHttpKubeClient>[0], 'server'>): HttpKubeClient => {
    const k = createHttpKubeClient({ server: url, token: async () => 't', ...c });
    clients.push(k);
    return k;
  };

  before(async () => {
    server = createServer({ key: pair?.key, cert: pair?.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"metadata":{"name":"a"}}');
    });
    server.on('secureConnection', () => tlsConnections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const k of clients) k.close();
    server.closeAllConnections();
    server.close();
  });

  const trusted = [
    { name: 'the cluster CA as base64 PEM (kubeconfig certificate-authority-data)', caData: () => Buffer.from(pair?.cert ?? '').toString('base64') },
    { name: 'the cluster CA as PEM text', caData: () => pair?.cert ?? '' },
  ];
  for (const c of trusted) {
    test(`verifies the server with ${c.name}`, async () => {
      const vmi = await client({ caData: c.caData() }).get(VMIS, 'default', 'a');
      assert.equal(vmi?.metadata?.name, 'a');
    });
  }

  test('an untrusted certificate is a transient network error, as client-node reports it', async () => {
    // act: no CA given, verification on
    const err = await rejection(client({}).get(VMIS, 'default', 'a'));
    // assert
    assert.ok(err instanceof KubeTransientError, String(err));
    assert.equal(err.reason, 'ServerError');
    assert.match(err.message, /network error/);
  });

  test('skipTLSVerify accepts any certificate', async () => {
    const vmi = await client({ skipTLSVerify: true }).get(VMIS, 'default', 'a');
    assert.equal(vmi?.metadata?.name, 'a');
  });

  test('requests in sequence share one kept-alive TLS connection', async () => {
    // arrange
    const k = client({ skipTLSVerify: true });
    const before = tlsConnections;
    // act
    for (let i = 0; i < 3; i++) await k.get(VMIS, 'default', 'a');
    // assert
    assert.equal(tlsConnections - before, 1, 'a warm function must not pay a TLS handshake per request');
  });
});
