/**
 * The certificate authorities virt-operator publishes, as the export and backup controllers
 * read them in the KubeVirt namespace: for each of `kubevirt-export-ca` and `kubevirt-backup-ca`
 * a `kubernetes.io/tls` Secret holding the CA (`tls.crt`, `tls.key`: what signs the exporter's
 * serving certificate and the backup client certificate) and a ConfigMap with its `ca-bundle`.
 *
 * The CA is a real self-signed X.509 certificate (P-256, 10 years) made with the `openssl`
 * binary, because node:crypto cannot issue certificates; the CLI is installed wherever the TLS
 * tests run (CI installs it when missing).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { statusCodeOf, type NodeSideApi } from '../nodes/api.ts';

const run = promisify(execFile);
// `data`, not `stringData`: the emulator stores what it is given, as a real server stores `data`.
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The names virt-operator uses (reference §6). */
export const EXPORT_CA = 'kubevirt-export-ca';
export const BACKUP_CA = 'kubevirt-backup-ca';
export const CA_BUNDLE_KEY = 'ca-bundle';

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

/** A new self-signed CA named `cn`. */
export async function makeCa(cn: string): Promise<CertificateAuthority> {
  const dir = await mkdtemp(join(tmpdir(), 'virt-reconciler-ca-'));
  try {
    const key = join(dir, 'ca.key');
    const crt = join(dir, 'ca.crt');
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', crt, '-days', '3650', '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return { certPem: await readFile(crt, 'utf8'), keyPem: await readFile(key, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

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
