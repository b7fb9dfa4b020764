// The operator under bench/floor.mjs reads its cluster as in a pod: the service account's
// token, CA and namespace files at /var/run/secrets/kubernetes.io/serviceaccount and
// KUBERNETES_SERVICE_HOST/_PORT, not a kubeconfig file (which would load the YAML parser,
// ~70 modules a pod never loads). The files are mounted for that process alone: it runs in
// a mount namespace of its own (unshare, root or CAP_SYS_ADMIN) with a tmpfs over /run.
// Where that cannot be done, the bench falls back to KUBECONFIG and says so.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

const MOUNT = [
  'mount -t tmpfs tmpfs /run',
  'mkdir -p /run/secrets/kubernetes.io/serviceaccount',
  'mount --bind "$SERVICE_ACCOUNT_FILES" /run/secrets/kubernetes.io/serviceaccount',
  'exec "$@"',
].join(' && ');

/** Whether this machine lets the bench give a process a mount namespace of its own. */
export function canMountServiceAccount() {
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs tmpfs /run'], {
    stdio: 'ignore',
  });
  return probe.status === 0;
}

/** The service account files for `namespace`, from the test cluster's kubeconfig (its admin token). */
export async function serviceAccountFiles(kubeconfigPath, namespace) {
  const config = parse(await readFile(kubeconfigPath, 'utf8'));
  const cluster = config.clusters.find((c) => c.name === config.contexts[0].context.cluster).cluster;
  const user = config.users.find((u) => u.name === config.contexts[0].context.user).user;
  const dir = await mkdtemp(join(os.tmpdir(), 'nestor-floor-sa-'));
  await writeFile(join(dir, 'token'), user.token);
  await writeFile(join(dir, 'ca.crt'), Buffer.from(cluster['certificate-authority-data'], 'base64'));
  await writeFile(join(dir, 'namespace'), namespace);
  const server = new URL(cluster.server);
  return { dir, env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port } };
}

/** The command that runs `execPath args` with the files at the service account's path. */
export function inPodCommand(files, execPath, args) {
  return {
    command: 'unshare',
    args: ['-m', '--propagation', 'private', 'sh', '-c', MOUNT, 'sh', execPath, ...args],
    env: { ...files.env, SERVICE_ACCOUNT_FILES: files.dir },
  };
}
