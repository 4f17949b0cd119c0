/**
 * The export controller's certificates (shared/storage/x509.ts, our own DER): INTEGERs minimal, so
 * OpenSSL reads every certificate — a random serial starting with 0x00 once made one unreadable
 * ("illegal padding", a full test run, 2026-12-06).
 */
import assert from 'node:assert/strict';
import { HAS_OPENSSL } from '../support/openssl.ts';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { makeCa } from '../../sandbox/pki.ts';
import { issueCertificate, positiveInteger } from '../../shared/storage/x509.ts';


test('a DER INTEGER from bytes: leading zeros dropped, a 0x00 only before a high bit', () => {
  const cases: [number[], string][] = [
    [[0x00, 0x01], '020101'],
    [[0x00, 0x00, 0x7f], '02017f'],
    [[0x80], '02020080'],
    [[0x00, 0x80, 0x01], '0203008001'],
    [[0x00], '020100'],
    [[0x00, 0x00], '020100'],
    [[0x12, 0x34], '02021234'],
  ];
  for (const [bytes, hex] of cases) assert.equal(positiveInteger(Buffer.from(bytes)).toString('hex'), hex, JSON.stringify(bytes));
});

test('500 certificates in a row: every one is read by OpenSSL, its serial positive and without padding', { skip: HAS_OPENSSL ? false : 'openssl is not available to make the CA' }, async () => {
  // arrange
  const ca = await makeCa('x509 test CA');
  const now = Date.UTC(2026, 11, 6);
  // act
  const serials = Array.from({ length: 500 }, () => {
    const issued = issueCertificate({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, commonName: 'export', dnsNames: ['a.b.svc'], usage: 'server', notBeforeMs: now, notAfterMs: now + 86_400_000 });
    return new X509Certificate(issued.certPem).serialNumber;
  });
  // assert
  assert.equal(serials.length, 500);
  for (const s of serials) assert.match(s, /^[4-7][0-9A-F]{31}$/, s);
});
