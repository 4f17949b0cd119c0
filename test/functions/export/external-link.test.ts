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
import { certForHost, externalIngress, ingressCert, ingressHost, type IngressLike } from '../../../functions/export/external-link.ts';
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
