import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ClusterConfig, type KubeConfigSource, SERVICE_ACCOUNT_DIR } from './cluster-config.js';

const SERVICE_ACCOUNT_TOKEN = `${SERVICE_ACCOUNT_DIR}/token`;

export interface KubeConfigSearch {
  /** Prefix of the in-cluster service account paths (tests; default none). */
  root?: string;
}

/**
 * The cluster to talk to, in controller-runtime's order: the given KubeConfig or kubeconfig
 * file (the option, or the `--kubeconfig` flag), else the files KUBECONFIG names, else the
 * in-cluster service account, else ~/.kube/config. Unlike
 * client-node's loadFromDefault it never falls back to http://localhost:8080 (which fails
 * later with a confusing TLS error): when nothing is found it says where it looked.
 */
export function loadKubeConfig(source?: KubeConfigSource | string, search: KubeConfigSearch = {}): KubeConfigSource {
  if (source !== undefined && typeof source !== 'string') return source;
  if (typeof source === 'string') {
    if (!existsSync(source)) {
      throw new Error(
        `the kubeConfig option of OperatorModule names ${source}, which does not exist: pass the path of a kubeconfig file, or leave kubeConfig out to use the in-cluster service account, KUBECONFIG or ~/.kube/config`,
      );
    }
    return withCluster(ClusterConfig.fromFile(source), source);
  }

  const { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port, KUBECONFIG: kubeconfigVariable } = process.env;
  const root = search.root ?? '';
  const tokenPath = `${root}${SERVICE_ACCOUNT_TOKEN}`;
  const hasToken = existsSync(tokenPath);

  const files = (kubeconfigVariable ?? '').split(delimiter).filter(Boolean);
  if (files.length) {
    // As kubectl: files of the list that do not exist are skipped, but not all of them.
    const present = files.filter((file) => existsSync(file));
    if (!present.length) {
      throw new Error(
        `KUBECONFIG names ${files.join(delimiter)}, and ${files.length === 1 ? 'that file does not exist' : 'none of these files exists'}: ` +
          'set KUBECONFIG to a kubeconfig file (as kubectl uses it), or unset it to use ~/.kube/config',
      );
    }
    // As kubectl: the first file that defines a name or sets current-context decides it.
    const merged = present.map((file) => ClusterConfig.fromFile(file)).reduce((config, next) => config.merge(next));
    return withCluster(merged, `KUBECONFIG (${present.join(delimiter)})`);
  }

  if (host && port && hasToken) return ClusterConfig.inCluster(root);

  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return withCluster(ClusterConfig.fromFile(home), home);

  const inCluster =
    host && port
      ? `KUBERNETES_SERVICE_HOST and _PORT are set, but there is no service account token at ${tokenPath} (is automountServiceAccountToken false?)`
      : `KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set${hasToken ? ` (though a service account token is at ${tokenPath})` : `, and there is no service account token at ${tokenPath}`}`;
  throw new Error(
    [
      'no Kubernetes cluster is configured. Nestor looked for:',
      '  - KUBECONFIG: not set',
      `  - the in-cluster service account: ${inCluster}`,
      `  - ${home}: does not exist`,
      'Run the operator in a pod with its service account token, set KUBECONFIG to a kubeconfig file, ' +
        'write ~/.kube/config (kubectl, kind or your cloud CLI do), or pass kubeConfig to OperatorModule.forRoot().',
    ].join('\n'),
  );
}

function withCluster(kubeConfig: ClusterConfig, from: string): ClusterConfig {
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error(
      `the kubeconfig from ${from} has no current cluster: set its current-context to a context whose cluster it defines (kubectl config use-context <name>)`,
    );
  }
  return kubeConfig;
}
