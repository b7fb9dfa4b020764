// What a self-managed webhook certificate keeps in its Secret, and when it is renewed. Pure:
// the clock is a parameter; reading and writing the Secret is self-managed-certificates.ts.
// Kept together in one Secret (as open-policy-agent/cert-controller does): the CA's key, so
// any replica renews the serving certificate from the same CA and the caBundle stays put.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import {
  certificateAuthority,
  certificateAuthorityFrom,
  renewalTime,
  selfSignedCertificate,
  splitPem,
} from '@nestor/core';

/** The Secret's keys: a kubernetes.io/tls Secret's tls.crt and tls.key, with cert-manager's ca.crt, and the CA's key. */
export interface CertificateSecretData {
  /** PEM of the CAs the caBundle trusts: the current one first, then older ones not yet expired. */
  'ca.crt': string;
  /** PEM of the current CA's key. */
  'ca.key': string;
  /** PEM of the serving certificate, signed by the current CA. */
  'tls.crt': string;
  'tls.key': string;
}

export interface RenewalPolicy {
  /** Names the serving certificate must carry (the Service's DNS names, hosts of URLs). */
  hosts: readonly string[];
  /** Serving certificate lifetime (default one year, as client-go's self-signed ones). */
  validityMs?: number;
  /** Renew the serving certificate when less than this is left (default a third of validityMs, as cert-manager's 2/3 point). */
  renewBeforeMs?: number;
  /** CA lifetime (default ten years, as cert-controller's). */
  caValidityMs?: number;
}

export const CERTIFICATE_SECRET_KEYS = ['ca.crt', 'ca.key', 'tls.crt', 'tls.key'] as const;

const DAY_MS = 24 * 3600_000;
export const DEFAULT_VALIDITY_MS = 365 * DAY_MS;
export const DEFAULT_CA_VALIDITY_MS = 10 * 365 * DAY_MS;

/** New content for the Secret and why, or undefined when what it holds is fine at `now`. */
export function renewedCertificateSecret(
  current: Partial<CertificateSecretData> | undefined,
  policy: RenewalPolicy,
  now: Date,
): { data: CertificateSecretData; reason: string } | undefined {
  if (policy.hosts.length === 0) throw new Error('a self-managed serving certificate needs at least one host name');
  const { validityMs, renewBeforeMs, caValidityMs } = lifetimes(policy);
  if (caValidityMs < validityMs + renewBeforeMs) {
    throw new Error(
      `the CA must outlive its serving certificates: caValidityMs ${caValidityMs} < validityMs ${validityMs} + renewBeforeMs ${renewBeforeMs}`,
    );
  }
  const issue = (cas: string[], caPair: { cert: string; key: string }, reason: string) => {
    const leaf = selfSignedCertificate({
      hosts: policy.hosts,
      issuer: certificateAuthorityFrom(caPair),
      validityMs,
      now,
    });
    return {
      data: { 'ca.crt': cas.join(''), 'ca.key': caPair.key, 'tls.crt': leaf.cert, 'tls.key': leaf.key },
      reason,
    };
  };
  const newCa = (reason: string, older: string[] = []) => {
    const ca = certificateAuthority({ commonName: 'nestor-webhook-ca', validityMs: caValidityMs, now });
    return issue([ca.cert, ...older], ca, reason);
  };

  const missing = CERTIFICATE_SECRET_KEYS.filter((key) => !current?.[key]);
  if (!current || missing.length === CERTIFICATE_SECRET_KEYS.length) return newCa('the Secret held no certificate');
  if (missing.includes('ca.crt') || missing.includes('ca.key')) return newCa(`the Secret lacked ${missing.join(', ')}`);
  let cas: X509Certificate[];
  try {
    cas = splitPem(current['ca.crt']!).map((pem) => new X509Certificate(pem));
    if (cas.length === 0) throw new Error('no PEM certificate in ca.crt');
    certificateAuthorityFrom({ cert: cas[0]!.toString(), key: current['ca.key']! });
  } catch (error) {
    return newCa(`its CA did not load (${(error as Error).message})`);
  }
  const ca = cas[0]!;
  const stillValid = (cert: X509Certificate) => new Date(cert.validTo).getTime() > now.getTime();
  const caPems = cas.filter(stillValid).map((cert) => cert.toString());
  if (now.getTime() >= caRenewalTime(ca, policy)) {
    return newCa(`its CA expires on ${new Date(ca.validTo).toISOString()}`, caPems);
  }
  const caPair = { cert: ca.toString(), key: current['ca.key']! };
  const pruned = caPems.length !== cas.length;
  const reissue = (reason: string) => issue(caPems, caPair, reason);
  if (missing.length) return reissue(`the Secret lacked ${missing.join(', ')}`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(current['tls.crt']!);
    if (!leaf.checkPrivateKey(createPrivateKey(current['tls.key']!)))
      return reissue('tls.key is not the key of tls.crt');
  } catch (error) {
    return reissue(`its serving certificate did not load (${(error as Error).message})`);
  }
  if (!(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)))
    return reissue('its serving certificate is from another CA');
  const absent = policy.hosts.filter((host) => !covers(leaf, host));
  if (absent.length) return reissue(`its serving certificate does not name ${absent.join(', ')}`);
  if (now.getTime() >= leafRenewalTime(leaf, policy)) {
    return reissue(`its serving certificate expires on ${new Date(leaf.validTo).toISOString()}`);
  }
  if (pruned) {
    return {
      data: { ...(current as CertificateSecretData), 'ca.crt': caPems.join('') },
      reason: 'an expired CA left the bundle',
    };
  }
  return undefined;
}

/** When the Secret's content next needs renewing (for a timer); undefined when it cannot be read. */
export function renewalDue(data: CertificateSecretData, policy: RenewalPolicy): Date | undefined {
  try {
    const leaf = new X509Certificate(data['tls.crt']);
    const ca = new X509Certificate(splitPem(data['ca.crt'])[0]!);
    return new Date(Math.min(leafRenewalTime(leaf, policy), caRenewalTime(ca, policy)));
  } catch {
    return undefined;
  }
}

/** The policy's lifetimes, defaults filled in. */
function lifetimes(policy: RenewalPolicy): { validityMs: number; renewBeforeMs: number; caValidityMs: number } {
  const validityMs = policy.validityMs ?? DEFAULT_VALIDITY_MS;
  return {
    validityMs,
    renewBeforeMs: policy.renewBeforeMs ?? Math.floor(validityMs / 3),
    caValidityMs: policy.caValidityMs ?? DEFAULT_CA_VALIDITY_MS,
  };
}

function leafRenewalTime(leaf: X509Certificate, policy: RenewalPolicy): number {
  return renewalTime(leaf.validTo, lifetimes(policy).renewBeforeMs);
}

/** A new serving certificate must not outlive the CA that signs it: the CA is renewed before the last could. */
function caRenewalTime(ca: X509Certificate, policy: RenewalPolicy): number {
  const { validityMs, renewBeforeMs } = lifetimes(policy);
  return renewalTime(ca.validTo, validityMs + renewBeforeMs);
}

function covers(certificate: X509Certificate, host: string): boolean {
  return isIP(host) ? certificate.checkIP(host) !== undefined : certificate.checkHost(host) !== undefined;
}
