import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ManualClock, selfSignedCertificate, type RuntimeLogger } from '@nestor/core';
import { ServingCertificate, type KeyPair } from './serving-certificate.js';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function certDir(pair?: KeyPair): string {
  const dir = mkdtempSync(join(tmpdir(), 'nestor-certs-'));
  dirs.push(dir);
  if (pair) write(dir, pair);
  return dir;
}

function write(dir: string, pair: KeyPair): void {
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key);
}

function recordingLogger(): RuntimeLogger & { lines: string[] } {
  const lines: string[] = [];
  const record = (message: string) => void lines.push(message);
  return { lines, debug: record, info: record, warn: record, error: record };
}

const fingerprint = (pair: KeyPair) => new X509Certificate(pair.cert).fingerprint256;

describe('ServingCertificate', () => {
  it('serves the files of certDir and reads them again when they change', () => {
    const first = selfSignedCertificate({ hosts: ['first.example'] });
    const dir = certDir(first);
    const clock = new ManualClock(Date.now());
    const certificate = new ServingCertificate({ certDir: dir, clock, pollMs: 10_000 });
    assert.equal(fingerprint(certificate.current), fingerprint(first));
    assert.match(certificate.source, /tls\.crt and .*tls\.key/);

    const served: KeyPair[] = [];
    certificate.watch((pair) => served.push(pair));
    clock.advance(10_000);
    assert.equal(served.length, 0, 'unchanged files are not read again');

    const second = selfSignedCertificate({ hosts: ['second.example'] });
    write(dir, second);
    clock.advance(10_000);
    assert.equal(served.length, 1);
    assert.equal(fingerprint(served[0]!), fingerprint(second));
    assert.equal(fingerprint(certificate.current), fingerprint(second));
    certificate.stop();
    assert.equal(clock.pendingTimers, 0);
  });

  it('keeps the current pair while the files do not match, and logs that once', () => {
    const first = selfSignedCertificate();
    const dir = certDir(first);
    const clock = new ManualClock(Date.now());
    const logger = recordingLogger();
    const certificate = new ServingCertificate({ certDir: dir, clock, logger, pollMs: 1000 });
    const served: KeyPair[] = [];
    certificate.watch((pair) => served.push(pair));

    // Half a rotation: the new certificate is written, its key not yet.
    const second = selfSignedCertificate();
    writeFileSync(join(dir, 'tls.crt'), second.cert);
    clock.advance(1000);
    clock.advance(1000);
    assert.equal(served.length, 0);
    assert.equal(fingerprint(certificate.current), fingerprint(first));
    assert.equal(logger.lines.filter((l) => l.startsWith('keeping the current serving certificate')).length, 1);

    writeFileSync(join(dir, 'tls.key'), second.key);
    clock.advance(1000);
    assert.equal(served.length, 1);
    assert.equal(fingerprint(certificate.current), fingerprint(second));
    certificate.stop();
  });

  it('refuses a certDir without the files, or with files that are not a key pair, saying what to do', () => {
    assert.throws(
      () => new ServingCertificate({ certDir: certDir() }),
      /cannot read .*tls\.crt \(ENOENT\): metrics\.certDir .* must hold the certificate and its key.*leave metrics\.certDir out/,
    );
    const dir = certDir({ cert: selfSignedCertificate().cert, key: selfSignedCertificate().key });
    assert.throws(() => new ServingCertificate({ certDir: dir }), /are not a PEM certificate and its private key/);
    const named = certDir();
    const pair = selfSignedCertificate();
    writeFileSync(join(named, 'server.pem'), pair.cert);
    writeFileSync(join(named, 'server-key.pem'), pair.key);
    const certificate = new ServingCertificate({ certDir: named, certName: 'server.pem', keyName: 'server-key.pem' });
    assert.equal(fingerprint(certificate.current), fingerprint(pair));
  });

  it('makes a self-signed certificate without certDir, and a new one a month before it expires', () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const certificate = new ServingCertificate({ clock, pollMs: 3600_000, hosts: ['localhost', '10.0.0.5'] });
    const first = new X509Certificate(certificate.current.cert);
    assert.equal(first.subjectAltName, 'DNS:localhost, IP Address:10.0.0.5');
    assert.equal(certificate.source, 'a self-signed certificate made at start-up');
    const served: KeyPair[] = [];
    certificate.watch((pair) => served.push(pair));
    clock.advance(300 * 24 * 3600_000);
    assert.equal(served.length, 0);
    clock.advance(40 * 24 * 3600_000);
    assert.equal(served.length, 1);
    const renewed = new X509Certificate(served[0]!.cert);
    assert.ok(Date.parse(renewed.validTo) > Date.parse(first.validTo));
    certificate.stop();
  });
});
