/**
 * Issues an X.509 certificate signed by a CA, as KubeVirt's certificate managers do for the
 * exporter pod's serving certificate (signed by `kubevirt-export-ca`) and the backup client
 * certificate (signed by `kubevirt-backup-ca`). node:crypto verifies and signs but cannot build a
 * certificate, and a Lambda bundle has no `openssl`; the DER of one v3 certificate is small, so it
 * is written here: a fresh P-256 key, the CA's subject as issuer (copied byte for byte from the CA
 * certificate, so chain building matches it exactly), SANs, key usage and extended key usage.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

function lengthBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v % 256);
  return [0x80 | out.length, ...out];
}
const tlv = (tag: number, ...body: Buffer[]): Buffer => {
  const b = Buffer.concat(body);
  return Buffer.concat([Buffer.from([tag, ...lengthBytes(b.length)]), b]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);
const explicit = (n: number, ...parts: Buffer[]) => tlv(0xa0 + n, ...parts);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);
const TRUE = Buffer.from([0x01, 0x01, 0xff]);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const groups: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      groups.unshift(v % 128);
      if (v < 128) break;
    }
    out.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return tlv(0x06, Buffer.from(out));
}

/**
 * A non-negative DER INTEGER from big-endian bytes: minimal (leading zero bytes dropped, one kept
 * for zero), with a 0x00 in front only when the high bit is set. A redundant leading zero is
 * "illegal padding" to OpenSSL: a random serial starting with 0x00 made one certificate in 256
 * unreadable (a test run hit it).
 */
export function positiveInteger(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, v.length === 0 ? Buffer.from([0]) : v[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // 2026-03-01T12:00:00.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

/** [start of contents, end] of the DER element at `off`, and where its header starts. */
function element(der: Buffer, off: number): { start: number; end: number } {
  let i = off + 1;
  let len = der[i++]!;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let k = 0; k < n; k++) len = len * 256 + der[i++]!;
  }
  return { start: i, end: i + len };
}

/** The DER of the subject Name of a certificate. */
function subjectDer(certDer: Buffer): Buffer {
  const cert = element(certDer, 0);
  const tbs = element(certDer, cert.start);
  let off = tbs.start;
  const fields: { off: number; end: number }[] = [];
  while (off < tbs.end && fields.length < 6) {
    const e = element(certDer, off);
    fields.push({ off, end: e.end });
    off = e.end;
  }
  // [0] version is present in v3 certificates: version, serial, signature, issuer, validity, subject.
  const hasVersion = certDer[fields[0]!.off] === 0xa0;
  const subject = fields[hasVersion ? 5 : 4]!;
  return certDer.subarray(subject.off, subject.end);
}

export interface IssueOptions {
  /** The CA certificate and key, PEM. */
  readonly caCertPem: string;
  readonly caKeyPem: string;
  readonly commonName: string;
  /** DNS subjectAltNames. */
  readonly dnsNames?: readonly string[];
  /** `server` (serverAuth) or `client` (clientAuth). */
  readonly usage: 'server' | 'client';
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
}

export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

const pem = (label: string, der: Buffer) => `-----BEGIN ${label}-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;

/** A new key and a certificate for it, signed by the CA. */
export function issueCertificate(o: IssueOptions): IssuedCertificate {
  const ca = new X509Certificate(o.caCertPem);
  const caKey = createPrivateKey(o.caKeyPem);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ec = caKey.asymmetricKeyType === 'ec';
  if (!ec && caKey.asymmetricKeyType !== 'rsa') throw new Error(`unsupported CA key type ${caKey.asymmetricKeyType ?? 'unknown'}`);
  const sigAlg = ec ? seq(oid('1.2.840.10045.4.3.2')) : seq(oid('1.2.840.113549.1.1.11'), Buffer.from([0x05, 0x00]));
  // 16 random bytes, positive and without a leading zero (RFC 5280: at most 20 octets, positive).
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const extensions: Buffer[] = [
    seq(oid('2.5.29.19'), TRUE, octets(seq())), // basicConstraints: not a CA
    seq(oid('2.5.29.15'), TRUE, octets(bits(Buffer.from([0xa0]), 5))), // keyUsage: digitalSignature, keyEncipherment
    seq(oid('2.5.29.37'), octets(seq(oid(o.usage === 'server' ? '1.3.6.1.5.5.7.3.1' : '1.3.6.1.5.5.7.3.2')))),
  ];
  if (o.dnsNames?.length) extensions.push(seq(oid('2.5.29.17'), octets(seq(...o.dnsNames.map((n) => tlv(0x82, Buffer.from(n, 'ascii')))))));
  const tbs = seq(
    explicit(0, positiveInteger(Buffer.from([2]))),
    positiveInteger(serial),
    sigAlg,
    subjectDer(ca.raw),
    seq(time(o.notBeforeMs), time(o.notAfterMs)),
    seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(o.commonName, 'utf8'))))),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, caKey);
  const der = seq(tbs, sigAlg, bits(signature));
  return { certPem: pem('CERTIFICATE', der), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
