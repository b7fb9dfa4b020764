import { generateKeyPair } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** The key pair that signs and verifies service-account tokens. */
export async function createServiceAccountKey(dir: string): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const privatePath = join(dir, 'sa.key');
  const publicPath = join(dir, 'sa.pub');
  await writeFile(privatePath, privateKey, { mode: 0o600 });
  await writeFile(publicPath, publicKey);
  return { privateKey: privatePath, publicKey: publicPath };
}
