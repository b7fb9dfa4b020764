// A self-signed serving certificate made in memory, as controller-runtime's metrics server
// does when it is given no certificate: the scrape is encrypted, and Prometheus (which
// scrapes pods with insecure_skip_verify, as it does kube-controller-manager's) needs no CA.
// A small CA too, as envtest's tinyca, for webhooks the API server calls in tests.
// node:crypto makes keys and signatures but no certificates, and the openssl binary is
// absent from distroless images, so the certificate is written here: a few DER values.
// Measured against @peculiar/x509 2.2.0 (21 packages, 5 MB): its import costs 130-380 ms and
// 21 MiB of RSS, a CA and leaf 14-25 ms, where this is 7 MiB (4 of them node:crypto's) and
// 1-2.5 ms; node-forge signs with RSA only. Tests check the output with OpenSSL's parser
// (X509Certificate) and kube-apiserver's Go verifier.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import * as der from './der.js';

/** A PEM certificate and its private key: what a TLS server presents. */
export interface KeyPair {
  cert: string;
  key: string;
}

export interface SelfSignedCertificate {
  /** PEM of the certificate and of its PKCS#8 private key. */
  cert: string;
  key: string;
  notAfter: Date;
}

export interface SelfSignedOptions {
  /** Names in the subjectAltName: DNS names and IP addresses (default localhost and 127.0.0.1). */
  hosts?: readonly string[];
  /** Default one year, as client-go's GenerateSelfSignedCertKey. */
  validityMs?: number;
  now?: Date;
  /** Sign with this CA instead of the certificate's own key. */
  issuer?: CertificateAuthority;
}

const OID = {
  commonName: '2.5.4.3',
  ecPublicKey: '1.2.840.10045.2.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

/** KeyUsage's bits (RFC 5280 §4.2.1.3): TLS server keys sign; a CA's key signs certificates. */
const DIGITAL_SIGNATURE = 0;
const KEY_CERT_SIGN = 5;

const YEAR_MS = 365 * 24 * 3600_000;
/** Valid from an hour ago, so a client whose clock is a little behind accepts it. */
const BACKDATE_MS = 3600_000;

/**
 * A certificate authority made in memory: it signs serving certificates (`issuer` of
 * selfSignedCertificate), and its certificate is what clients trust (a webhook's
 * caBundle), so the serving certificate can be renewed without telling them.
 */
export interface CertificateAuthority {
  /** PEM of the CA certificate and of its PKCS#8 private key. */
  cert: string;
  key: string;
  notAfter: Date;
  /** The DER subject name, written as the issuer of what it signs. */
  readonly name: Buffer;
}

export interface CertificateAuthorityOptions {
  /** Default 'nestor-ca'. */
  commonName?: string;
  /** Default one year. */
  validityMs?: number;
  now?: Date;
}

/** An ECDSA P-256 CA, signed by itself, that may sign only end-entity certificates. */
export function certificateAuthority(options: CertificateAuthorityOptions = {}): CertificateAuthority {
  const now = options.now ?? new Date();
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const name = subjectName(`${options.commonName ?? 'nestor-ca'}@${Math.floor(now.getTime() / 1000)}`);
  const notAfter = new Date(now.getTime() + (options.validityMs ?? YEAR_MS));
  const cert = signedCertificate({
    subject: name,
    issuer: name,
    publicKey,
    signingKey: privateKey,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    extensions: [
      // cA true, pathLenConstraint 0: it signs leaves, never another CA.
      extension(OID.basicConstraints, true, der.sequence(der.boolean(true), der.unsignedInteger(Buffer.from([0])))),
      extension(OID.keyUsage, true, der.namedBits([DIGITAL_SIGNATURE, KEY_CERT_SIGN])),
      // RFC 5280 §4.2.1.2: a CA names its key, so chains pick the right CA when two share a bundle.
      extension(OID.subjectKeyIdentifier, false, der.octetString(keyIdentifier(publicKey))),
    ],
  });
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, notAfter, name };
}

/**
 * A CA made earlier (by certificateAuthority, kept in a Secret), from its PEM certificate and
 * key: it signs new serving certificates as the same issuer. Throws when the certificate is
 * not a CA or the key is not its key.
 */
export function certificateAuthorityFrom(pair: KeyPair): CertificateAuthority {
  const x509 = new X509Certificate(pair.cert);
  if (!x509.ca) throw new Error(`the certificate of ${x509.subject} is not a CA (basicConstraints cA is not true)`);
  if (!x509.checkPrivateKey(createPrivateKey(pair.key))) {
    throw new Error(`the key is not the private key of the CA certificate ${x509.subject}`);
  }
  // Certificate → tbsCertificate → [version, serial, signature, issuer, validity, subject, ...]
  const fields = der.children(der.children(der.read(x509.raw))[0]!);
  const subject = fields[fields[0]?.tag === 0xa0 ? 5 : 4]; // version is optional (v1)
  if (!subject) throw new Error(`the CA certificate ${x509.subject} has no subject`);
  return { cert: pair.cert, key: pair.key, notAfter: new Date(x509.validTo), name: Buffer.from(subject.bytes) };
}

/**
 * An ECDSA P-256 key and a serving certificate for it: signed by itself, or by `issuer`
 * (then clients trust the CA, not this certificate).
 */
export function selfSignedCertificate(options: SelfSignedOptions = {}): SelfSignedCertificate {
  const hosts = options.hosts?.length ? options.hosts : ['localhost', '127.0.0.1'];
  const now = options.now ?? new Date();
  const notAfter = new Date(now.getTime() + (options.validityMs ?? YEAR_MS));
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  // As client-go names its self-signed certificates: host@unix-seconds.
  const subject = subjectName(`${hosts[0]}@${Math.floor(now.getTime() / 1000)}`);
  const cert = signedCertificate({
    subject,
    issuer: options.issuer?.name ?? subject,
    publicKey,
    signingKey: options.issuer ? createPrivateKey(options.issuer.key) : privateKey,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    extensions: [
      // Not a CA: it signs nothing else. A client may still pin it as its one trust anchor.
      extension(OID.basicConstraints, true, der.sequence()),
      extension(OID.keyUsage, true, der.namedBits([DIGITAL_SIGNATURE])),
      extension(OID.extKeyUsage, false, der.sequence(der.oid(OID.serverAuth))),
      extension(OID.subjectAltName, false, der.sequence(...hosts.map(generalName))),
      extension(OID.subjectKeyIdentifier, false, der.octetString(keyIdentifier(publicKey))),
      // keyIdentifier [0] of the signer's key: the CA's, or its own when self-signed.
      extension(
        OID.authorityKeyIdentifier,
        false,
        der.sequence(der.implicit(0, keyIdentifier(options.issuer ? createPublicKey(options.issuer.cert) : publicKey))),
      ),
    ],
  });
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, notAfter };
}

/**
 * When a certificate valid until `notAfter` is renewed: `renewBeforeMs` before it, and from
 * then on. One rule for the self-signed certificate a server makes again and for the
 * self-managed webhook certificate and its CA.
 */
export function renewalTime(notAfter: Date | string, renewBeforeMs: number): number {
  return new Date(notAfter).getTime() - renewBeforeMs;
}

/** The certificates of a PEM bundle, each its own block with its trailing newline. */
export function splitPem(bundle: string): string[] {
  return (bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map(
    (block) => `${block}\n`,
  );
}

interface CertificateFields {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

/** An X.509 v3 certificate in PEM (RFC 5280 §4.1), signed ecdsa-with-SHA256. */
function signedCertificate(fields: CertificateFields): string {
  const algorithm = der.sequence(der.oid(OID.ecdsaWithSha256));
  const tbs = der.sequence(
    der.explicit(0, der.unsignedInteger(Buffer.from([2]))), // v3
    der.unsignedInteger(serialNumber()),
    algorithm,
    fields.issuer,
    der.sequence(der.time(fields.notBefore), der.time(fields.notAfter)),
    fields.subject,
    fields.publicKey.export({ type: 'spki', format: 'der' }),
    der.explicit(3, der.sequence(...fields.extensions)),
  );
  // ECDSA signatures come out of node:crypto DER-encoded (Ecdsa-Sig-Value), as X.509 wants.
  const signature = sign('sha256', tbs, fields.signingKey);
  return pem('CERTIFICATE', der.sequence(tbs, algorithm, der.bitString(signature)));
}

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits (an identifier, not a signature). */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = der.read(publicKey.export({ type: 'spki', format: 'der' }));
  const bits = der.children(spki)[1]!;
  return createHash('sha1').update(bits.content.subarray(1)).digest();
}

function subjectName(commonName: string): Buffer {
  return der.sequence(der.set(der.sequence(der.oid(OID.commonName), der.utf8String(commonName))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));
}

/** A positive 127-bit serial: random, as RFC 5280 recommends, under its 20-byte limit. */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes;
}

/** A dNSName, or an iPAddress for an IPv4 address (no IPv6: nothing here asks for one). */
function generalName(host: string): Buffer {
  if (isIPv4(host)) return der.implicit(7, Buffer.from(host.split('.').map(Number)));
  if (isIPv6(host))
    throw new Error(`selfSignedCertificate: IPv6 address ${host} is not supported; name a DNS name or an IPv4 address`);
  return der.implicit(2, Buffer.from(host, 'ascii'));
}

function pem(label: string, body: Buffer): string {
  const lines = body.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
