/**
 * The certificate authorities virt-operator publishes, as the export and backup controllers
 * read them in the KubeVirt namespace: for each of `kubevirt-export-ca` and `kubevirt-backup-ca`
 * a `kubernetes.io/tls` Secret holding the CA (`tls.crt`, `tls.key`: what signs the exporter's
 * serving certificate and the backup client certificate) and a ConfigMap with its `ca-bundle`.
 *
 * The CA is a real self-signed X.509 certificate (P-256, 10 years): ../pki.ts.
 */
import { statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { makeCa, type CertificateAuthority } from '../pki.ts';

export { makeCa, type CertificateAuthority } from '../pki.ts';

// `data`, not `stringData`: the emulator stores what it is given, as a real server stores `data`.
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The names virt-operator uses (reference §6). */
export const EXPORT_CA = 'kubevirt-export-ca';
export const BACKUP_CA = 'kubevirt-backup-ca';
export const CA_BUNDLE_KEY = 'ca-bundle';

async function createOrKeep(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err) {
    if (statusCodeOf(err) !== 409) throw err;
  }
}

/** Publishes both CAs in `namespace` (existing objects are kept, as on an operator restart). */
export async function publishOperatorCas(api: NodeSideApi, namespace = 'kubevirt'): Promise<Record<string, CertificateAuthority>> {
  const out: Record<string, CertificateAuthority> = {};
  for (const name of [EXPORT_CA, BACKUP_CA]) {
    const ca = await makeCa(`${name}@sandbox`);
    out[name] = ca;
    const labels = { 'app.kubernetes.io/managed-by': 'virt-operator', 'kubevirt.io': '' };
    await createOrKeep(() =>
      api.core.createNamespacedSecret({
        namespace,
        body: { metadata: { name, namespace, labels }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) } },
      }),
    );
    await createOrKeep(() => api.core.createNamespacedConfigMap({ namespace, body: { metadata: { name, namespace, labels }, data: { [CA_BUNDLE_KEY]: ca.certPem } } }));
  }
  return out;
}
