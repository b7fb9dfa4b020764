import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { splitPem } from '@nestor/core';
import { renewalDue, renewedCertificateSecret, type CertificateSecretData } from './certificate-secret.js';

const DAY = 24 * 3600_000;
const HOSTS = ['hooks.ops.svc', 'hooks.ops.svc.cluster.local', '127.0.0.1'];
const start = new Date('2026-01-01T00:00:00Z');
const later = (days: number) => new Date(start.getTime() + days * DAY);

function fresh(policy = { hosts: HOSTS }): CertificateSecretData {
  return renewedCertificateSecret(undefined, policy, start)!.data;
}

describe('renewedCertificateSecret', () => {
  it('makes a CA and a serving certificate for the hosts, signed by it, when the Secret is empty', () => {
    const renewal = renewedCertificateSecret({}, { hosts: HOSTS }, start)!;
    assert.equal(renewal.reason, 'the Secret held no certificate');
    const ca = new X509Certificate(renewal.data['ca.crt']);
    const leaf = new X509Certificate(renewal.data['tls.crt']);
    assert.ok(ca.ca);
    assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
    assert.equal(leaf.subjectAltName, 'DNS:hooks.ops.svc, DNS:hooks.ops.svc.cluster.local, IP Address:127.0.0.1');
    assert.equal(new Date(leaf.validTo).toISOString(), later(365).toISOString());
    assert.equal(new Date(ca.validTo).toISOString(), later(3650).toISOString());
  });

  it('leaves a Secret alone until a third of the serving certificate’s life is left, then renews it from the same CA', () => {
    const data = fresh();
    assert.equal(renewedCertificateSecret(data, { hosts: HOSTS }, later(200)), undefined);
    const due = later(365).getTime() - Math.floor((365 * DAY) / 3);
    assert.equal(renewalDue(data, { hosts: HOSTS })?.getTime(), due);
    const renewal = renewedCertificateSecret(data, { hosts: HOSTS }, later(250))!;
    assert.match(renewal.reason, /its serving certificate expires on 2027-01-01/);
    assert.equal(renewal.data['ca.crt'], data['ca.crt'], 'the CA, and so the caBundle, stays');
    assert.equal(renewal.data['ca.key'], data['ca.key']);
    assert.notEqual(renewal.data['tls.crt'], data['tls.crt']);
    const leaf = new X509Certificate(renewal.data['tls.crt']);
    assert.ok(leaf.verify(new X509Certificate(data['ca.crt']).publicKey));
  });

  it('renews the serving certificate when it lacks a host, or its key does not match', () => {
    const data = fresh();
    const more = renewedCertificateSecret(data, { hosts: [...HOSTS, 'localhost'] }, later(1))!;
    assert.match(more.reason, /does not name localhost/);
    assert.equal(more.data['ca.crt'], data['ca.crt']);
    assert.equal(renewedCertificateSecret(data, { hosts: [HOSTS[0]!] }, later(1)), undefined, 'a superset is fine');
    const other = fresh();
    assert.match(
      renewedCertificateSecret({ ...data, 'tls.key': other['tls.key'] }, { hosts: HOSTS }, later(1))!.reason,
      /tls.key is not the key of tls.crt/,
    );
    assert.match(
      renewedCertificateSecret(
        { ...data, 'tls.crt': other['tls.crt'], 'tls.key': other['tls.key'] },
        { hosts: HOSTS },
        later(1),
      )!.reason,
      /from another CA/,
    );
  });

  it('makes a new CA before the old one would expire under a new certificate, and keeps the old one in the bundle until it expires', () => {
    const policy = { hosts: HOSTS, validityMs: 30 * DAY, renewBeforeMs: 10 * DAY, caValidityMs: 100 * DAY };
    const data = fresh(policy);
    // From day 60 on, a new certificate (30 days, renewed 10 days early) would outlive the CA.
    assert.equal(renewedCertificateSecret(data, policy, later(15))?.reason, undefined);
    const renewal = renewedCertificateSecret(data, policy, later(61))!;
    assert.match(renewal.reason, /its CA expires on 2026-04-11/);
    const bundle = splitPem(renewal.data['ca.crt']);
    assert.equal(bundle.length, 2);
    assert.equal(bundle[1], data['ca.crt'], 'the old CA, still trusted for certificates it signed');
    const newCa = new X509Certificate(bundle[0]!);
    assert.ok(new X509Certificate(renewal.data['tls.crt']).verify(newCa.publicKey));
    // The serving certificate is renewed from the new CA, the bundle still holds both...
    const leafRenewal = renewedCertificateSecret(renewal.data, policy, later(85))!;
    assert.match(leafRenewal.reason, /serving certificate expires/);
    assert.equal(leafRenewal.data['ca.crt'], renewal.data['ca.crt']);
    // ...until the old CA expired: it leaves the bundle, nothing else changes.
    const pruned = renewedCertificateSecret(leafRenewal.data, policy, later(101))!;
    assert.equal(pruned.reason, 'an expired CA left the bundle');
    assert.deepEqual(splitPem(pruned.data['ca.crt']), [bundle[0]]);
    assert.equal(pruned.data['tls.crt'], leafRenewal.data['tls.crt']);
  });

  it('starts again from a new CA when the Secret’s CA cannot be used', () => {
    const data = fresh();
    assert.match(
      renewedCertificateSecret({ ...data, 'ca.crt': 'garbage' }, { hosts: HOSTS }, later(1))!.reason,
      /its CA did not load/,
    );
    assert.match(
      renewedCertificateSecret({ 'tls.crt': data['tls.crt'] }, { hosts: HOSTS }, later(1))!.reason,
      /lacked ca.crt, ca.key/,
    );
    assert.match(
      renewedCertificateSecret({ ...data, 'ca.key': fresh()['ca.key'] }, { hosts: HOSTS }, later(1))!.reason,
      /its CA did not load \(the key is not the private key/,
    );
  });

  it('refuses a policy whose CA would not outlive its certificates', () => {
    assert.throws(
      () => renewedCertificateSecret(undefined, { hosts: HOSTS, caValidityMs: 100 * DAY }, start),
      /the CA must outlive its serving certificates/,
    );
    assert.throws(() => renewedCertificateSecret(undefined, { hosts: [] }, start), /at least one host/);
  });
});
