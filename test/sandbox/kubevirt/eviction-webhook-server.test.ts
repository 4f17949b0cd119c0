/**
 * virt-api's eviction interceptor as an HTTPS admission webhook (what the real lane's
 * kube-apiserver calls; the real-lane drain e2e drives it through kubectl): here its AdmissionReview
 * answers over TLS with its own CA, its reads and its mark, against the emulator's API server.
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../../sandbox/apiserver/index.ts';
import { evictionWebhookConfiguration, EVICTION_INTERCEPTOR, EVICTION_PATH, startEvictionWebhookServer, VIRT_API_IDENTITY, type EvictionWebhookServer } from '../../../sandbox/kubevirt/eviction-webhook-server.ts';
import type { VirtualMachineInstance } from '../../../shared/api/index.ts';
import { PODS, VMIS } from '../../../shared/api/resources.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';

interface Review {
  response?: { uid?: string; allowed?: boolean; status?: { code?: number; message?: string } };
}

function post(server: EvictionWebhookServer, body: object): Promise<Review> {
  const url = new URL(`${server.url}${EVICTION_PATH}`);
  return new Promise((resolve, reject) => {
    const req = request({ hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', ca: server.caPem, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(JSON.parse(text) as Review));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const review = (pod: string, o: { dryRun?: boolean; descheduler?: boolean } = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `uid-${pod}`,
    kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: 'eviction',
    name: pod,
    namespace: 'default',
    operation: 'CREATE',
    dryRun: o.dryRun ?? false,
    object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: 'default', ...(o.descheduler ? { annotations: { 'requested-by': 'sigs.k8s.io/descheduler' } } : {}) } },
  },
});

describe('the eviction webhook server', () => {
  let api: ApiServer;
  let server: EvictionWebhookServer;
  let kube: KubeClient;
  before(async () => {
    api = await startApiServer({ port: 0 });
    kube = createKubeClient(api.kubeConfig('test'));
    server = await startEvictionWebhookServer({ kc: api.kubeConfig(VIRT_API_IDENTITY) });
    for (const [name, strategy] of [['mig', 'LiveMigrate'], ['dry', 'LiveMigrate'], ['desched', 'LiveMigrate'], ['none', 'None']] as const) {
      await kube.create(VMIS, { metadata: { name, namespace: 'default' }, spec: { evictionStrategy: strategy, domain: { devices: {} } } } as VirtualMachineInstance);
      await kube.patch(VMIS, 'default', name, { type: 'merge', body: { status: { phase: 'Running', nodeName: 'node01', conditions: [{ type: 'LiveMigratable', status: 'True' }] } } });
      await kube.create(PODS, {
        metadata: { name: `virt-launcher-${name}`, namespace: 'default', labels: { 'kubevirt.io': 'virt-launcher' }, annotations: { 'kubevirt.io/domain': name } },
        spec: { nodeName: 'node01', containers: [{ name: 'compute', image: 'virt-launcher' }] },
      } as never);
    }
    await kube.create(PODS, { metadata: { name: 'plain', namespace: 'default' }, spec: { nodeName: 'node01', containers: [{ name: 'c', image: 'busybox' }] } } as never);
  });
  after(async () => {
    await server?.stop();
    await api?.close();
  });

  test('answers each eviction as virt-api does: 429 and the mark for a migrating strategy, allowed otherwise', async () => {
    const rows: [string, ReturnType<typeof review>, boolean, string | undefined][] = [
      ['LiveMigrate launcher: refused with 429, VMI marked', review('virt-launcher-mig'), false, 'node01'],
      ['dry-run: refused, nothing written', review('virt-launcher-dry', { dryRun: true }), false, undefined],
      ['None launcher: allowed', review('virt-launcher-none'), true, undefined],
      ['not a launcher: allowed', review('plain'), true, undefined],
      ['no such pod: allowed (the API server answers 404)', review('gone'), true, undefined],
    ];
    for (const [name, body, allowed, mark] of rows) {
      // act
      const got = await post(server, body);
      // assert
      assert.equal(got.response?.uid, body.request.uid, name);
      assert.equal(got.response?.allowed, allowed, name);
      if (!allowed) assert.equal(got.response?.status?.code, 429, name);
      const vmiName = body.request.name.replace('virt-launcher-', '');
      const v = await kube.get(VMIS, 'default', vmiName);
      if (v) assert.equal(v.status?.evacuationNodeName, mark, `${name}: mark`);
    }
    const marked = await post(server, review('virt-launcher-mig'));
    assert.equal(marked.response?.status?.message, 'Evacuation in progress: Eviction triggered evacuation of VMI "default/mig"', 'a second eviction finds the mark');
  });

  test('the descheduler\'s eviction also sets the eviction-source annotation; the mark is written as virt-api', async () => {
    // act
    const got = await post(server, review('virt-launcher-desched', { descheduler: true }));
    // assert
    assert.equal(got.response?.allowed, false);
    const v = await kube.get(VMIS, 'default', 'desched');
    assert.equal(v?.metadata?.annotations?.['kubevirt.io/eviction-source'], 'descheduler');
    assert.equal(v?.status?.evacuationNodeName, 'node01');
    assert.equal(api.audit.query({ resource: 'virtualmachineinstances', name: 'desched', identity: VIRT_API_IDENTITY }).length, 1);
  });

  test('the configuration: pods/eviction CREATE, the server URL and its CA, fail closed, no side effects on dry-run', () => {
    // act
    const cfg = evictionWebhookConfiguration(server.url, server.caPem) as { webhooks: { name: string; clientConfig: { url: string; caBundle: string }; rules: unknown[]; failurePolicy: string; sideEffects: string }[] };
    // assert
    const [hook] = cfg.webhooks;
    assert.equal(hook?.name, EVICTION_INTERCEPTOR);
    assert.equal(hook?.clientConfig.url, `${server.url}${EVICTION_PATH}`);
    assert.equal(Buffer.from(hook?.clientConfig.caBundle ?? '', 'base64').toString(), server.caPem);
    assert.deepEqual(hook?.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], scope: 'Namespaced' }]);
    assert.equal(hook?.failurePolicy, 'Fail');
    assert.equal(hook?.sideEffects, 'NoneOnDryRun');
  });
});
