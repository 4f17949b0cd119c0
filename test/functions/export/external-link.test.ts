/**
 * The export's external link (issue 38 item 9; KubeVirt's getExternalLinks): the Ingress that
 * publishes the `virt-exportproxy` service gives the host, its TLS secret the certificate for that
 * host (with the issuer's chain), and the status carries the same URLs as the internal link under
 * the export API path. Certificates are real ones made by the sandbox's openssl PKI.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { X509Certificate } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineExport } from '../../../shared/api/export.ts';
import { makeCa, issueServingCertificate, type CertificateAuthority, type ServingCertificate } from '../../../sandbox/pki.ts';
import { certForHost, externalIngress, externalRoute, ingressCert, ingressHost, type IngressLike, type RouteLike } from '../../../functions/export/external-link.ts';
import { readExternal } from '../../../functions/export/read-external.ts';
import { startApiServer } from '../../../sandbox/apiserver/index.ts';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { createKubeClient } from '../../../shared/kube/client-node.ts';
import { NotFoundError } from '../../../shared/kube/errors.ts';
import { planStatus } from '../../../functions/export/export-status.ts';
import { renderManifestConfigMap } from '../../../functions/export/manifest.ts';
import type { VirtualMachine } from '../../../shared/api/index.ts';
import type { SourceResult } from '../../../functions/export/source.ts';

const proxyRule = (host: string, service = 'virt-exportproxy'): IngressLike => ({ spec: { rules: [{ host, http: { paths: [{ backend: { service: { name: service } } }] } }], tls: [{ secretName: 'export-tls' }] } });

describe('the Ingress that publishes the export proxy', () => {
  const table: { name: string; ing: IngressLike; want: string }[] = [
    { name: 'a rule whose path goes to virt-exportproxy: its host', ing: proxyRule('export.example.com'), want: 'export.example.com' },
    { name: 'a rule to another service: none', ing: proxyRule('x.example.com', 'other'), want: '' },
    { name: 'a default backend to the proxy: the first rule\'s host', ing: { spec: { defaultBackend: { service: { name: 'virt-exportproxy' } }, rules: [{ host: 'd.example.com' }] } }, want: 'd.example.com' },
    { name: 'a default backend elsewhere: none, whatever the rules say', ing: { spec: { defaultBackend: { service: { name: 'web' } }, rules: [{ host: 'w.example.com', http: { paths: [{ backend: { service: { name: 'virt-exportproxy' } } }] } }] } }, want: '' },
  ];
  for (const row of table) {
    test(row.name, () => {
      // act / assert
      assert.equal(ingressHost(row.ing), row.want);
    });
  }

  test('the first Ingress with a host wins, with its TLS secret', () => {
    // act
    const got = externalIngress([proxyRule('x', 'other'), proxyRule('export.example.com')]);
    // assert
    assert.deepEqual(got, { host: 'export.example.com', secretName: 'export-tls' });
  });
});

describe('the certificate for the external host', () => {
  let ca: CertificateAuthority;
  let wildcard: ServingCertificate;
  let other: ServingCertificate;
  before(async () => {
    ca = await makeCa('export-ingress-ca');
    wildcard = await issueServingCertificate(ca, 'ingress', { dns: ['*.example.com'] });
    other = await issueServingCertificate(ca, 'unrelated.test', { dns: ['unrelated.test'] });
  });

  test('the certificate serving the host (by a wildcard name), then its issuer', () => {
    // arrange
    const bundle = [other.certPem, wildcard.certPem, ca.certPem].join('\n');
    // act
    const pem = certForHost('export.example.com', bundle, Date.now());
    // assert
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    assert.deepEqual(blocks.map((b) => new X509Certificate(b).subject.trim()), ['CN=ingress', 'CN=export-ingress-ca']);
  });

  test('none serves the host: every certificate valid now', () => {
    // act
    const pem = certForHost('nothing.else', [other.certPem, ca.certPem].join('\n'), Date.now());
    // assert
    assert.equal((pem.match(/BEGIN CERTIFICATE/g) ?? []).length, 2);
  });

  test('from the TLS secret\'s tls.crt; no secret: no certificate', () => {
    // act
    const fromSecret = ingressCert('export.example.com', { data: { 'tls.crt': Buffer.from(wildcard.certPem).toString('base64') } }, Date.now());
    // assert
    assert.ok(fromSecret.includes('BEGIN CERTIFICATE'));
    assert.equal(ingressCert('export.example.com', undefined, Date.now()), '');
  });
});

describe('the export status with an external host', () => {
  test('the internal link\'s URLs under the export API path, the Ingress\'s certificate', () => {
    // arrange
    const vme = { metadata: { name: 'exp', namespace: 'ns' }, spec: { source: { apiGroup: '', kind: 'PersistentVolumeClaim', name: 'disk' } } } as VirtualMachineExport;
    const pod = { status: { phase: 'Running', containerStatuses: [{ name: 'exporter', ready: true }] } } as V1Pod;
    const src = { kind: 'pvc', volumes: [{ claim: { metadata: { name: 'disk' }, spec: { volumeMode: 'Filesystem' } } }], readyCondition: { type: 'Ready', status: 'True', reason: '', message: '' } } as unknown as SourceResult;
    // act
    const plan = planStatus({}, { vme, src, pod, serviceName: 'virt-export-exp', caBundle: 'CA', nowIso: '2026-12-06T10:00:00Z', external: { host: 'export.example.com', cert: 'INGRESS-CERT' } });
    // assert
    const base = 'https://export.example.com/api/export.kubevirt.io/v1/namespaces/ns/virtualmachineexports/exp';
    assert.deepEqual(plan.status.links?.external, {
      cert: 'INGRESS-CERT',
      volumes: [{ name: 'disk', formats: [{ format: 'dir', url: `${base}/volumes/disk/dir` }, { format: 'tar.gz', url: `${base}/volumes/disk/disk.tar.gz` }] }],
      manifests: [{ type: 'auth-header-secret', url: `${base}/external/manifests/secret` }],
    });
    assert.equal(plan.status.links?.internal?.manifests?.[0]?.url, 'https://virt-export-exp.ns.svc/internal/manifests/secret', 'the internal link unchanged');
  });
});

describe('the VM manifest ConfigMap with an external host', () => {
  test('external_host (with the export API path) and external_ca_cm besides the internal pair', () => {
    // arrange
    const vme = { metadata: { name: 'exp', namespace: 'ns', uid: 'u' }, spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'vm' } } } as VirtualMachineExport;
    const vm = { metadata: { name: 'vm', namespace: 'ns' }, spec: { template: { spec: { domain: { devices: {} } } } } } as VirtualMachine;
    // act
    const without = renderManifestConfigMap(vme, { vm, claims: [], internalHost: 'virt-export-exp.ns.svc', caBundle: 'CA' });
    const withExternal = renderManifestConfigMap(vme, { vm, claims: [], internalHost: 'virt-export-exp.ns.svc', caBundle: 'CA', external: { host: 'export.example.com', cert: 'INGRESS-CERT' } });
    // assert
    assert.equal(without.data?.['external_host'], undefined, 'no Ingress: no external entries');
    assert.equal(withExternal.data?.['external_host'], 'export.example.com/api/export.kubevirt.io/v1/namespaces/ns/virtualmachineexports/exp');
    assert.deepEqual(JSON.parse(withExternal.data?.['external_ca_cm'] ?? '{}').data, { 'ca.pem': 'INGRESS-CERT' });
    assert.equal(withExternal.data?.['internal_host'], 'virt-export-exp.ns.svc');
  });
});

describe('the Route that publishes the export proxy (OpenShift)', () => {
  const route = (labels: Record<string, string> | undefined, to: string, hosts: string[]): RouteLike => ({ metadata: labels ? { labels } : {}, spec: { to: { name: to } }, status: { ingress: hosts.map((host) => ({ host })) } });
  const op = { 'app.kubernetes.io/managed-by': 'virt-operator' };
  const table: { name: string; routes: RouteLike[]; want: string | undefined }[] = [
    { name: "virt-operator's Route to the proxy: its first admitted host", routes: [route(op, 'virt-exportproxy', ['a.apps.example.com', 'b.apps.example.com'])], want: 'a.apps.example.com' },
    { name: 'the old operator label counts too', routes: [route({ 'app.kubernetes.io/managed-by': 'kubevirt-operator' }, 'virt-exportproxy', ['o.example.com'])], want: 'o.example.com' },
    { name: "a Route without virt-operator's label: not read (KubeVirt's informer selects by it)", routes: [route(undefined, 'virt-exportproxy', ['x.example.com'])], want: undefined },
    { name: 'a Route to another service: none', routes: [route(op, 'web', ['w.example.com'])], want: undefined },
    { name: 'not admitted yet (no ingress in its status): none', routes: [route(op, 'virt-exportproxy', [])], want: undefined },
  ];
  for (const row of table) {
    test(row.name, () => {
      // act / assert
      assert.equal(externalRoute(row.routes), row.want);
    });
  }
});

describe('reading the external host: Ingress first, then Routes', () => {
  let ca: CertificateAuthority;
  let leaf: ServingCertificate;
  before(async () => {
    ca = await makeCa('route-ca');
    leaf = await issueServingCertificate(ca, 'export.apps.example.com', { dns: ['export.apps.example.com'] });
  });

  /**
   * A FAKE client, not a cluster: neither the API server emulator nor the real kube-apiserver this
   * project runs serves `route.openshift.io`, so only a fake can answer a Route list. It serves
   * the lists and objects given, and a 404 (NotFoundError) for a resource it was given none of —
   * what an API server that does not serve the group answers.
   */
  function fakeKube(lists: Record<string, object[]>, objects: Record<string, object>): Pick<KubeClient, 'get' | 'list'> {
    return {
      list: (async (res: { plural: string }) => {
        const items = lists[res.plural];
        if (!items) throw new NotFoundError({ verb: 'list', resource: res.plural, namespace: 'kubevirt' });
        return { items };
      }) as never,
      get: (async (res: { plural: string }, _ns: string, name: string) => objects[`${res.plural}/${name}`]) as never,
    };
  }
  const routeTo = { metadata: { labels: { 'app.kubernetes.io/managed-by': 'virt-operator' } }, spec: { to: { name: 'virt-exportproxy' } }, status: { ingress: [{ host: 'export.apps.example.com' }] } };

  test('no Ingress, a Route: its host, the certificate kube-root-ca.crt offers for it', async () => {
    // arrange
    const kube = fakeKube({ ingresses: [], routes: [routeTo] }, { 'configmaps/kube-root-ca.crt': { data: { 'ca.crt': `${leaf.certPem}\n${ca.certPem}` } } });
    // act
    const got = await readExternal(kube, 'kubevirt', Date.now());
    // assert
    assert.equal(got?.host, 'export.apps.example.com');
    assert.equal(new X509Certificate(got!.cert.split(/(?=-----BEGIN)/)[0]!).subject.includes('export.apps.example.com'), true, 'the leaf for the host first');
  });

  test('an Ingress to the proxy wins over a Route', async () => {
    // arrange
    const kube = fakeKube({ ingresses: [proxyRule('ing.example.com')], routes: [routeTo] }, {});
    // act / assert
    assert.equal((await readExternal(kube, 'kubevirt', Date.now()))?.host, 'ing.example.com');
  });

  test('the Route group not served (404), no Ingress: no external host, no error', async () => {
    // arrange
    const kube = fakeKube({ ingresses: [] }, {});
    // act / assert
    assert.equal(await readExternal(kube, 'kubevirt', Date.now()), undefined);
  });

  test('on the sandbox API server (which serves no route.openshift.io): no Ingress, no Route, no error', async () => {
    // arrange
    const server = await startApiServer({ port: 0 });
    try {
      const kube = createKubeClient(server.kubeConfig('test'));
      // act / assert
      assert.equal(await readExternal(kube, 'kubevirt', Date.now()), undefined);
    } finally {
      await server.close();
    }
  });
});
