import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  decodeEksToken,
  EKS_TOKEN_PREFIX,
  eksKubeConfig,
  eksKubeConfigFromEnv,
  eksToken,
  eksTokenProvider,
  TOKEN_RENEW_AFTER_MS,
} from '../../../shared/kube/eks-token.ts';

// Fixed, fake credentials (AWS's documentation example keys) and a fixed time: the token is deterministic.
const CREDS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const NOW = new Date('2026-11-29T10:00:00Z');

/** An independent SigV4 (node:crypto only) to check the SDK signer's query signature. */
function expectedSignature(url: URL, clusterName: string, secret: string): string {
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  const enc = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const query = params.map(([k, v]) => [enc(k), enc(v)]).sort(([a], [b]) => (a! < b! ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join('&');
  const canonical = ['GET', '/', query, `host:${url.host}`, `x-k8s-aws-id:${clusterName}`, '', 'host;x-k8s-aws-id', createHash('sha256').update('').digest('hex')].join('\n');
  const amzDate = url.searchParams.get('X-Amz-Date')!;
  const scope = `${amzDate.slice(0, 8)}/us-east-1/sts/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  let key: Buffer = Buffer.from(`AWS4${secret}`);
  for (const part of [amzDate.slice(0, 8), 'us-east-1', 'sts', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return createHmac('sha256', key).update(toSign).digest('hex');
}

describe('EKS IAM token', () => {
  test('is k8s-aws-v1. + unpadded base64url of a presigned STS GetCallerIdentity URL, 60 s, cluster header signed', async () => {
    // arrange / act
    const { token } = await eksToken({ clusterName: 'prod-east', region: 'us-east-1', credentials: CREDS, now: NOW });
    // assert
    assert.ok(token.startsWith(EKS_TOKEN_PREFIX), 'EKS rejects a token without the k8s-aws-v1. prefix');
    assert.match(token.slice(EKS_TOKEN_PREFIX.length), /^[A-Za-z0-9_-]+$/, 'base64url without padding, as aws-iam-authenticator expects');
    const url = decodeEksToken(token);
    assert.equal(url.origin, 'https://sts.us-east-1.amazonaws.com');
    assert.equal(url.pathname, '/');
    assert.equal(url.searchParams.get('Action'), 'GetCallerIdentity');
    assert.equal(url.searchParams.get('Version'), '2011-06-15');
    assert.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
    assert.equal(url.searchParams.get('X-Amz-Credential'), 'AKIDEXAMPLE/20261129/us-east-1/sts/aws4_request');
    assert.equal(url.searchParams.get('X-Amz-Date'), '20261129T100000Z');
    assert.equal(url.searchParams.get('X-Amz-Expires'), '60', 'EKS requires a 60 s presign expiry');
    assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'host;x-k8s-aws-id', 'the cluster id header must be signed, or the token could be replayed against another cluster');
  });

  test('signature matches an independent SigV4 computation', async () => {
    // arrange
    const { token } = await eksToken({ clusterName: 'prod-east', region: 'us-east-1', credentials: CREDS, now: NOW });
    // act
    const url = decodeEksToken(token);
    // assert
    assert.equal(url.searchParams.get('X-Amz-Signature'), expectedSignature(url, 'prod-east', CREDS.secretAccessKey));
  });

  test('a session token (the Lambda role) is carried, escaped, and signed', async () => {
    // arrange
    const creds = { ...CREDS, sessionToken: 'IQoJb3JpZ2luX2Vj+/session=' };
    // act
    const url = decodeEksToken((await eksToken({ clusterName: 'c', region: 'us-east-1', credentials: creds, now: NOW })).token);
    // assert
    assert.equal(url.searchParams.get('X-Amz-Security-Token'), creds.sessionToken);
    assert.equal(url.searchParams.get('X-Amz-Signature'), expectedSignature(url, 'c', CREDS.secretAccessKey));
  });

  test('is deterministic for fixed credentials and time, and differs per cluster', async () => {
    const a = await eksToken({ clusterName: 'a', region: 'eu-west-1', credentials: CREDS, now: NOW });
    const a2 = await eksToken({ clusterName: 'a', region: 'eu-west-1', credentials: CREDS, now: NOW });
    const b = await eksToken({ clusterName: 'b', region: 'eu-west-1', credentials: CREDS, now: NOW });
    assert.equal(a.token, a2.token);
    assert.notEqual(a.token, b.token, 'the cluster name is part of the signature');
  });

  test('provider reuses a token until the renew age, then signs a new one', async () => {
    // arrange
    let t = NOW.getTime();
    const next = eksTokenProvider({ clusterName: 'c', region: 'us-east-1', credentials: CREDS, clock: () => t });
    // act
    const first = await next();
    t += TOKEN_RENEW_AFTER_MS - 1;
    const same = await next();
    t += 2;
    const renewed = await next();
    // assert
    assert.equal(same, first, 'a warm function must not re-sign per request');
    assert.notEqual(renewed, first, 'EKS stops accepting a token after 15 min');
  });

  test('KubeConfig puts the bearer token on requests and verifies TLS with the cluster CA', async () => {
    // arrange
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
    const kc = eksKubeConfig({ clusterName: 'c', endpoint: 'https://ABC.gr7.us-east-1.eks.amazonaws.com', caData: ca, region: 'us-east-1', token: async () => 'k8s-aws-v1.abc' });
    const opts: { headers?: Record<string, string> } = {};
    // act
    await kc.applyToHTTPSOptions(opts);
    // assert
    assert.equal(opts.headers?.authorization, 'Bearer k8s-aws-v1.abc');
    assert.equal(kc.getCurrentCluster()?.skipTLSVerify, false);
    assert.equal(kc.getCurrentCluster()?.server, 'https://ABC.gr7.us-east-1.eks.amazonaws.com');
  });

  test('from env: absent endpoint → undefined; endpoint without CA → error naming the variable', () => {
    assert.equal(eksKubeConfigFromEnv({}), undefined);
    assert.throws(() => eksKubeConfigFromEnv({ EKS_CLUSTER_ENDPOINT: 'https://x', EKS_CLUSTER_NAME: 'c', AWS_REGION: 'us-east-1' }), /EKS_CLUSTER_CA_DATA/);
    assert.throws(() => eksKubeConfig({ clusterName: 'c', endpoint: 'http://x', caData: 'Y2E=', region: 'us-east-1' }), /https/);
  });
});
