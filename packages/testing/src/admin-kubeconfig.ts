import { stringify } from 'yaml';
import type { AdminIdentity } from './admin-identity.js';

/** The kubeconfig of the environment's admin: the server, the CA it trusts, the admin's token or certificate. */
export function kubeconfigFile(server: string, ca: string, identity: AdminIdentity): string {
  const base64 = (text: string) => Buffer.from(text).toString('base64');
  const user = identity.token
    ? { token: identity.token }
    : {
        'client-certificate-data': base64(identity.clientCertificate!),
        'client-key-data': base64(identity.clientKey!),
      };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'nestor-test', cluster: { server, 'certificate-authority-data': base64(ca) } }],
    users: [{ name: 'admin', user }],
    contexts: [{ name: 'nestor-test', context: { cluster: 'nestor-test', user: 'admin' } }],
    'current-context': 'nestor-test',
  });
}
