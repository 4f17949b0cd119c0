/**
 * Certificates the simulated KubeVirt side needs: self-signed CAs (virt-operator's export and
 * backup CAs, the eviction webhook's CA) and serving certificates they sign (the webhook virt-api
 * serves to the real API server over HTTPS). Made with the `openssl` binary, because node:crypto
 * cannot issue X.509 certificates; the CLI is installed wherever the TLS tests run (CI installs it
 * when missing). P-256 keys throughout.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

/** A serving certificate and its key, PEM. */
export interface ServingCertificate {
  certPem: string;
  keyPem: string;
}

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'virt-reconciler-pki-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A new self-signed CA named `cn` (10 years). */
export function makeCa(cn: string): Promise<CertificateAuthority> {
  return inTempDir(async (dir) => {
    const key = join(dir, 'ca.key');
    const crt = join(dir, 'ca.crt');
    await run('openssl', ['req', '-x509', ...EC_KEY, '-keyout', key, '-out', crt, '-days', '3650', '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    return { certPem: await readFile(crt, 'utf8'), keyPem: await readFile(key, 'utf8') };
  });
}

/**
 * A server certificate for `cn`, signed by `ca`, valid for the given IP addresses and DNS names
 * (subjectAltName: Go's TLS client, which the API server uses for webhooks, ignores the CN).
 */
export function issueServingCertificate(ca: CertificateAuthority, cn: string, sans: { ips?: readonly string[]; dns?: readonly string[] }): Promise<ServingCertificate> {
  return inTempDir(async (dir) => {
    const [caKey, caCrt, key, csr, crt, ext] = ['ca.key', 'ca.crt', 'tls.key', 'tls.csr', 'tls.crt', 'ext.cnf'].map((f) => join(dir, f)) as [string, string, string, string, string, string];
    await writeFile(caKey, ca.keyPem, { mode: 0o600 });
    await writeFile(caCrt, ca.certPem);
    const alt = [...(sans.ips ?? []).map((ip) => `IP:${ip}`), ...(sans.dns ?? []).map((d) => `DNS:${d}`)].join(',');
    await writeFile(ext, `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${alt}\n`);
    await run('openssl', ['req', '-new', ...EC_KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${cn}`]);
    await run('openssl', ['x509', '-req', '-in', csr, '-CA', caCrt, '-CAkey', caKey, '-CAcreateserial', '-out', crt, '-days', '365', '-extfile', ext]);
    return { certPem: await readFile(crt, 'utf8'), keyPem: await readFile(key, 'utf8') };
  });
}
