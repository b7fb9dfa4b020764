import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface KubeConfigSearch {
  /** Prefix of the in-cluster service account paths (tests; default none). */
  root?: string;
}

/**
 * The cluster to talk to: the given KubeConfig or kubeconfig file, else the in-cluster
 * service account, else the files KUBECONFIG names, else ~/.kube/config. Unlike
 * client-node's loadFromDefault it never falls back to http://localhost:8080 (which fails
 * later with a confusing TLS error): when nothing is found it says where it looked.
 */
export function loadKubeConfig(source?: KubeConfig | string, search: KubeConfigSearch = {}): KubeConfig {
  if (source instanceof KubeConfig) return source;
  const kubeConfig = new KubeConfig();
  if (typeof source === 'string') {
    if (!existsSync(source)) {
      throw new Error(
        `the kubeConfig option of OperatorModule names ${source}, which does not exist: pass the path of a kubeconfig file, or leave kubeConfig out to use the in-cluster service account, KUBECONFIG or ~/.kube/config`,
      );
    }
    kubeConfig.loadFromFile(source);
    return withCluster(kubeConfig, source);
  }

  const { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port, KUBECONFIG: kubeconfigVariable } = process.env;
  const root = search.root ?? '';
  const tokenPath = `${root}${SERVICE_ACCOUNT_TOKEN}`;
  const hasToken = existsSync(tokenPath);
  if (host && port && hasToken) {
    kubeConfig.loadFromCluster(root);
    return kubeConfig;
  }

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
    kubeConfig.loadFromFile(present[0]!);
    for (const file of present.slice(1)) {
      const next = new KubeConfig();
      next.loadFromFile(file);
      // As kubectl: the first file that sets current-context decides it.
      kubeConfig.mergeConfig(next, Boolean(kubeConfig.currentContext));
    }
    return withCluster(kubeConfig, `KUBECONFIG (${present.join(delimiter)})`);
  }

  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) {
    kubeConfig.loadFromFile(home);
    return withCluster(kubeConfig, home);
  }

  const inCluster =
    host && port
      ? `KUBERNETES_SERVICE_HOST and _PORT are set, but there is no service account token at ${tokenPath} (is automountServiceAccountToken false?)`
      : `KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set${hasToken ? ` (though a service account token is at ${tokenPath})` : `, and there is no service account token at ${tokenPath}`}`;
  throw new Error(
    [
      'no Kubernetes cluster is configured. Nestor looked for:',
      `  - the in-cluster service account: ${inCluster}`,
      '  - KUBECONFIG: not set',
      `  - ${home}: does not exist`,
      'Run the operator in a pod with its service account token, set KUBECONFIG to a kubeconfig file, ' +
        'write ~/.kube/config (kubectl, kind or your cloud CLI do), or pass kubeConfig to OperatorModule.forRoot().',
    ].join('\n'),
  );
}

function withCluster(kubeConfig: KubeConfig, from: string): KubeConfig {
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error(
      `the kubeconfig from ${from} has no current cluster: set its current-context to a context whose cluster it defines (kubectl config use-context <name>)`,
    );
  }
  return kubeConfig;
}
