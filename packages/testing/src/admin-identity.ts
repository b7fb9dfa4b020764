import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type Authentication = 'token' | 'client-cert';

/** What the environment's admin user presents, and the files the API server reads. */
export interface AdminIdentity {
  token?: string;
  clientCertificate?: string;
  clientKey?: string;
  /** kube-apiserver flags that make it accept this identity. */
  apiServerFlags: string[];
}

/** The admin: user "admin" in group system:masters, by bearer token or client certificate. */
export async function createAdminIdentity(dir: string, authentication: Authentication): Promise<AdminIdentity> {
  if (authentication === 'token') {
    const token = randomBytes(24).toString('hex');
    const file = join(dir, 'tokens.csv');
    await writeFile(file, `${token},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
    return { token, apiServerFlags: [`--token-auth-file=${file}`] };
  }
  // Node can make keys but not certificates; openssl is on every machine that runs etcd.
  const caKey = join(dir, 'client-ca.key');
  const caCert = join(dir, 'client-ca.crt');
  const key = join(dir, 'admin.key');
  const csr = join(dir, 'admin.csr');
  const cert = join(dir, 'admin.crt');
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      caKey,
      '-out',
      caCert,
      '-days',
      '2',
      '-subj',
      '/CN=nestor-test-client-ca',
    ]);
    await run('openssl', [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      '/O=system:masters/CN=admin',
    ]);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      caCert,
      '-CAkey',
      caKey,
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '2',
    ]);
  } catch (error) {
    throw new Error(
      `client-certificate authentication needs openssl to sign the admin certificate: ${(error as Error).message}. ` +
        `Install openssl or use authentication: 'token'.`,
      { cause: error },
    );
  }
  return {
    clientCertificate: await readFile(cert, 'utf8'),
    clientKey: await readFile(key, 'utf8'),
    apiServerFlags: [`--client-ca-file=${caCert}`],
  };
}
