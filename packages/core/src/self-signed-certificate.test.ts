import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { once } from 'node:events';
import { request, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import * as der from './der.js';
import { certificateAuthority, certificateAuthorityFrom, selfSignedCertificate } from './self-signed-certificate.js';

/** The value (the OCTET STRING's content) of a certificate's extension. */
function extension(certificate: X509Certificate, oid: string): Buffer {
  const fields = der.children(der.children(der.read(certificate.raw))[0]!);
  const extensions = der.children(der.children(fields.find((f) => f.tag === 0xa3)!)[0]!);
  const wanted = der.oid(oid);
  const found = extensions.map((e) => der.children(e)).find(([id]) => id!.bytes.equals(wanted));
  assert.ok(found, `extension ${oid}`);
  return found.at(-1)!.content;
}

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

  it('issues serving certificates from a CA that clients trust instead, so the leaf can change', async () => {
    const ca = certificateAuthority({ now: new Date() });
    const caX509 = new X509Certificate(ca.cert);
    assert.equal(caX509.ca, true);
    assert.ok(caX509.verify(caX509.publicKey), 'the CA signs itself');
    const leaves = [1, 2].map(() => selfSignedCertificate({ hosts: ['127.0.0.1'], issuer: ca }));
    for (const leaf of leaves) {
      const x509 = new X509Certificate(leaf.cert);
      assert.equal(x509.issuer, caX509.subject);
      assert.ok(x509.checkIssued(caX509) && x509.verify(caX509.publicKey), 'signed by the CA');
      assert.ok(!x509.verify(x509.publicKey), 'not by itself');
    }
    for (const leaf of leaves) {
      const server = createServer(leaf, (_, res) => res.end('hello'));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      try {
        const status = await new Promise<number | undefined>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, ca: ca.cert }, (res) => {
            res.resume();
            resolve(res.statusCode);
          });
          req.on('error', reject);
          req.end();
        });
        assert.equal(status, 200, 'a client trusting only the CA verifies the leaf');
      } finally {
        server.close();
      }
    }
  });
});

describe('certificateAuthorityFrom', () => {
  it('signs as the same issuer as the CA it was read from, naming its key', () => {
    const made = certificateAuthority();
    const loaded = certificateAuthorityFrom({ cert: made.cert, key: made.key });
    assert.deepEqual(loaded.name, made.name);
    assert.equal(loaded.notAfter.getTime(), Math.floor(made.notAfter.getTime() / 1000) * 1000);
    const leaf = new X509Certificate(selfSignedCertificate({ hosts: ['svc.ns.svc'], issuer: loaded }).cert);
    const ca = new X509Certificate(made.cert);
    assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
    // The leaf's authorityKeyIdentifier [0] is the CA's subjectKeyIdentifier.
    const caKeyId = der.read(extension(ca, '2.5.29.14')).content;
    assert.equal(caKeyId.length, 20);
    const authority = der.children(der.read(extension(leaf, '2.5.29.35')))[0]!;
    assert.equal(authority.tag, 0x80);
    assert.deepEqual(authority.content, caKeyId);
  });

  it('refuses a certificate that is not a CA, and a key that is not its key', () => {
    const leaf = selfSignedCertificate();
    assert.throws(() => certificateAuthorityFrom(leaf), /is not a CA/);
    const [one, two] = [certificateAuthority(), certificateAuthority()];
    assert.throws(() => certificateAuthorityFrom({ cert: one.cert, key: two.key }), /is not the private key/);
  });
});
