import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { connectionFromEnv, KubeConnectionError } from '../../shared/kube/connection.ts';
import { decodeEksToken } from '../../shared/kube/eks-iam-token.ts';

const EKS = {
  EKS_CLUSTER_ENDPOINT: 'https://ABC.gr7.us-east-1.eks.amazonaws.com',
  EKS_CLUSTER_NAME: 'prod-east',
  EKS_CLUSTER_CA_DATA: 'Y2E=',
  AWS_REGION: 'us-east-1',
};

describe('Kubernetes connection from the Lambda environment', () => {
  test('EKS variables → the endpoint, its CA, and an IAM token for that cluster', async () => {
    // arrange: fixed fake credentials, so the token can be minted offline
    const env = { ...EKS, AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      // act
      const c = connectionFromEnv(env);
      const token = await c.token?.();
      // assert
      assert.equal(c.server, EKS.EKS_CLUSTER_ENDPOINT);
      assert.equal(c.caData, 'Y2E=');
      assert.equal(c.skipTLSVerify, undefined, 'TLS is always verified against EKS');
      assert.ok(token, 'an EKS connection has a token source');
      assert.equal(decodeEksToken(token).searchParams.get('X-Amz-SignedHeaders'), 'host;x-k8s-aws-id');
      assert.match(c.description ?? '', /prod-east/);
    } finally {
      for (const k of Object.keys(env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  test('KUBE_API_SERVER + token + insecure flag → a plain connection (e.g. the sandbox)', async () => {
    const c = connectionFromEnv({ KUBE_API_SERVER: 'http://127.0.0.1:8080', KUBE_TOKEN: 'reconciler', KUBE_INSECURE_SKIP_TLS_VERIFY: 'true' });
    assert.equal(c.server, 'http://127.0.0.1:8080');
    assert.equal(c.skipTLSVerify, true);
    assert.equal(await c.token?.(), 'reconciler');
    assert.doesNotMatch(c.description ?? '', /reconciler/, 'the token never goes to the log line');
  });

  test('EKS wins when both are set (the deployed configuration)', () => {
    assert.equal(connectionFromEnv({ ...EKS, KUBE_API_SERVER: 'https://other' }).server, EKS.EKS_CLUSTER_ENDPOINT);
  });

  const invalid = [
    { name: 'nothing set', env: {}, message: /EKS_CLUSTER_ENDPOINT, EKS_CLUSTER_NAME and EKS_CLUSTER_CA_DATA.*or KUBE_API_SERVER/ },
    { name: 'only a kubeconfig (not read in Lambda)', env: { KUBECONFIG: '/home/me/.kube/config' }, message: /KUBE_API_SERVER/ },
    { name: 'EKS endpoint without its CA', env: { ...EKS, EKS_CLUSTER_CA_DATA: '' }, message: /EKS_CLUSTER_CA_DATA/ },
    { name: 'EKS endpoint without a cluster name', env: { ...EKS, EKS_CLUSTER_NAME: undefined }, message: /EKS_CLUSTER_NAME/ },
    { name: 'EKS endpoint without a region', env: { ...EKS, AWS_REGION: undefined }, message: /AWS_DEFAULT_REGION/ },
    { name: 'EKS endpoint over http', env: { ...EKS, EKS_CLUSTER_ENDPOINT: 'http://x' }, message: /must be https/ },
    { name: 'plain http without the insecure flag', env: { KUBE_API_SERVER: 'http://127.0.0.1:1' }, message: /HTTP protocol is not allowed/ },
    { name: 'a server that is not a URL', env: { KUBE_API_SERVER: 'apiserver:6443' }, message: /must be https|not a URL/ },
    { name: 'an insecure flag that is not a boolean', env: { KUBE_API_SERVER: 'https://x', KUBE_INSECURE_SKIP_TLS_VERIFY: 'maybe' }, message: /true or false/ },
  ];
  for (const c of invalid) {
    test(`${c.name} → KubeConnectionError naming what to set`, () => {
      assert.throws(() => connectionFromEnv(c.env), (err: unknown) => {
        assert.ok(err instanceof KubeConnectionError, String(err));
        assert.match(err.message, c.message);
        return true;
      });
    });
  }
});
