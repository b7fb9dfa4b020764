import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { once } from 'node:events';
import { request, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { selfSignedCertificate } from './self-signed-certificate.js';

describe('selfSignedCertificate', () => {
  it('makes a certificate for localhost and 127.0.0.1 that is valid for a year, signed by its own key', () => {
    const now = new Date('2026-03-01T12:00:00Z');
    const { cert, key, notAfter } = selfSignedCertificate({ now });
    const x509 = new X509Certificate(cert);
    assert.equal(x509.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1');
    assert.equal(x509.subject, `CN=localhost@${now.getTime() / 1000}`);
    assert.equal(x509.issuer, x509.subject);
    assert.equal(new Date(x509.validFrom).toISOString(), '2026-03-01T11:00:00.000Z');
    assert.equal(new Date(x509.validTo).toISOString(), '2027-03-01T12:00:00.000Z');
    assert.equal(notAfter.toISOString(), '2027-03-01T12:00:00.000Z');
    assert.equal(x509.ca, false, 'a serving certificate, not a CA');
    assert.deepEqual(x509.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'extended key usage: TLS server');
    assert.ok(x509.verify(x509.publicKey), 'signed by its own key');
    assert.ok(x509.checkPrivateKey(createPrivateKey(key)), 'the key is the certificate’s');
    assert.equal(createPublicKey(key).asymmetricKeyDetails?.namedCurve, 'prime256v1');
  });

  it('names the hosts it is given, and makes a new key and serial each time', () => {
    const first = new X509Certificate(selfSignedCertificate({ hosts: ['metrics.example', '10.1.2.3'] }).cert);
    const second = new X509Certificate(selfSignedCertificate({ hosts: ['metrics.example', '10.1.2.3'] }).cert);
    assert.equal(first.subjectAltName, 'DNS:metrics.example, IP Address:10.1.2.3');
    assert.notEqual(first.serialNumber, second.serialNumber);
    assert.notEqual(first.fingerprint256, second.fingerprint256);
    assert.throws(() => selfSignedCertificate({ hosts: ['::1'] }), /IPv6 address ::1 is not supported/);
  });

  it('serves TLS that a client pinning the certificate verifies, by name and by address', async () => {
    const { cert, key } = selfSignedCertificate();
    const server = createServer({ cert, key }, (_, res) => res.end('hello'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      for (const servername of ['localhost', undefined]) {
        const body = await new Promise<string>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, ca: cert, ...(servername ? { servername } : {}) }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          });
          req.on('error', reject);
          req.end();
        });
        assert.equal(body, 'hello', `verified as ${servername ?? '127.0.0.1'}`);
      }
    } finally {
      server.close();
    }
  });
});
