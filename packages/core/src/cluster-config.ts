import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { isIPv6 } from 'node:net';
import { dirname, isAbsolute, join } from 'node:path';
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node';
// client-node's parsing of kubeconfig entries, without its generated API client: importing
// the package root costs ~55 MB of RSS (the generated models and clients) that an operator
// which only needs the cluster and the credentials should not pay.
import { newClusters, newContexts, newUsers } from '@kubernetes/client-node/dist/config_types.js';
import { parseKubeconfig } from './kubeconfig-document.js';

/**
 * What Nestor reads of a kubeconfig: the current cluster and user, and the TLS material and
 * auth for a request. `ClusterConfig` has this shape, and so has client-node's `KubeConfig`,
 * so either can be handed to Nestor.
 */
export interface KubeConfigSource {
  getCurrentCluster(): Cluster | null;
  getCurrentUser(): User | null;
  /** Sets ca, cert, key, rejectUnauthorized, servername, auth headers (and an agent for a proxy). */
  applyToHTTPSOptions(options: RequestOptions): Promise<void>;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The subset of client-node's authenticator interface used here. */
interface Authenticator {
  isAuthProvider(user: User): unknown;
  applyAuthentication(user: User, options: RequestOptions): Promise<void>;
}

/**
 * A loaded kubeconfig: clusters, users, contexts and the current context, with client-node's
 * semantics for TLS material and auth. The common credentials (tokens, token files as in a
 * pod, client certificates, basic auth, exec plugins) are applied here with client-node's own
 * authenticators; the rest (the azure, gcp and oidc auth providers, a cluster's proxy-url)
 * are handed to a full client-node `KubeConfig`, loaded on first use only.
 */
export class ClusterConfig implements KubeConfigSource {
  private authenticator?: Promise<Authenticator | undefined>;
  private delegate?: Promise<KubeConfig>;

  constructor(
    readonly clusters: readonly Cluster[],
    readonly users: readonly User[],
    readonly contexts: readonly Context[],
    readonly currentContext: string,
  ) {}

  /** Parses kubeconfig YAML (or JSON). Relative file paths are resolved against `directory`. */
  static fromString(text: string, directory?: string): ClusterConfig {
    return ClusterConfig.fromDocument(parseKubeconfig(text), directory);
  }

  /**
   * A kubeconfig from outside the process (a Secret anyone with write access to it may
   * change), with everything inline: it is refused when it would read this process's files
   * (a token-file, a certificate or key path: the operator's own service account token sent
   * to a server of the writer's choosing) or run a command (exec, auth-provider), naming the
   * field; `allowExec` lets exec plugins and auth providers through for those who trust the
   * writers.
   */
  static fromInline(text: string, options: { allowExec?: boolean } = {}): ClusterConfig {
    const doc = parseKubeconfig(text);
    const refused: string[] = [];
    const entries = (list: unknown, field: string) =>
      (Array.isArray(list) ? list : []).map((entry: Record<string, unknown>) => ({
        name: String(entry['name'] ?? '?'),
        body: (entry[field] ?? {}) as Record<string, unknown>,
      }));
    for (const { name, body } of entries(doc['clusters'], 'cluster')) {
      if (body['certificate-authority'] !== undefined) refused.push(`cluster ${name}: certificate-authority (a file)`);
    }
    for (const { name, body } of entries(doc['users'], 'user')) {
      for (const field of ['token-file', 'client-certificate', 'client-key'])
        if (body[field] !== undefined) refused.push(`user ${name}: ${field} (a file)`);
      if (!options.allowExec) {
        for (const field of ['exec', 'auth-provider'])
          if (body[field] !== undefined) refused.push(`user ${name}: ${field} (runs code in this process)`);
      }
    }
    if (refused.length > 0) {
      throw new Error(
        `a kubeconfig from outside the process must hold its credentials inline; refused: ${refused.join('; ')}. ` +
          'Use certificate-authority-data, client-certificate-data, client-key-data or token' +
          (options.allowExec ? '' : ' (exec and auth providers only where the writers are trusted: allowExec)'),
      );
    }
    return ClusterConfig.fromDocument(doc);
  }

  private static fromDocument(doc: Record<string, unknown>, directory?: string): ClusterConfig {
    let users: User[];
    try {
      users = newUsers(doc.users);
    } catch (error) {
      // What is left to fail once the fields are checked: reading a user's token-file.
      throw new Error(`a user's token-file cannot be read: ${(error as Error).message}`, { cause: error });
    }
    const config = new ClusterConfig(
      newClusters(doc.clusters),
      users,
      newContexts(doc.contexts),
      typeof doc['current-context'] === 'string' ? doc['current-context'] : '',
    );
    return directory ? config.withAbsolutePaths(directory) : config;
  }

  static fromFile(path: string): ClusterConfig {
    try {
      return ClusterConfig.fromString(readFileSync(path, 'utf8'), dirname(path));
    } catch (error) {
      throw new Error(`cannot read the kubeconfig ${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * The pod's service account, as client-go's InClusterConfig: the API server from
   * KUBERNETES_SERVICE_HOST and _PORT, its CA and the token file (read again as it rotates).
   */
  static inCluster(root = ''): ClusterConfig {
    const { KUBERNETES_SERVICE_HOST: host = '', KUBERNETES_SERVICE_PORT: port = '' } = process.env;
    const dir = `${root}${SERVICE_ACCOUNT_DIR}`;
    let namespace: string | undefined;
    try {
      namespace = readFileSync(`${dir}/namespace`, 'utf8').trim();
    } catch {
      namespace = undefined; // a token without a namespace file still authenticates
    }
    const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
    return new ClusterConfig(
      [
        {
          name: 'inCluster',
          server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`,
          caFile: `${dir}/ca.crt`,
          skipTLSVerify: false,
        },
      ],
      [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: `${dir}/token` } } }],
      [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', ...(namespace ? { namespace } : {}) }],
      'inClusterContext',
    );
  }

  /**
   * This config with the entries of `next` it does not have, as kubectl merges the files of
   * KUBECONFIG: the first file that defines a name (or sets current-context) wins.
   */
  merge(next: ClusterConfig): ClusterConfig {
    const missing = <T extends { name: string }>(mine: readonly T[], theirs: readonly T[]): T[] => [
      ...mine,
      ...theirs.filter((entry) => !mine.some((own) => own.name === entry.name)),
    ];
    return new ClusterConfig(
      missing(this.clusters, next.clusters),
      missing(this.users, next.users),
      missing(this.contexts, next.contexts),
      this.currentContext || next.currentContext,
    );
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  getContextObject(name: string): Context | null {
    return this.contexts.find((context) => context.name === name) ?? null;
  }

  getCurrentCluster(): Cluster | null {
    const context = this.getContextObject(this.currentContext);
    return (context && this.clusters.find((cluster) => cluster.name === context.cluster)) ?? null;
  }

  getCurrentUser(): User | null {
    const context = this.getContextObject(this.currentContext);
    return (context && this.users.find((user) => user.name === context.user)) ?? null;
  }

  async applyToHTTPSOptions(options: RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    if (cluster?.proxyUrl || (user && needsClientNode(user))) {
      this.delegate ??= this.toClientNode();
      return (await this.delegate).applyToHTTPSOptions(options);
    }
    if (!user) return;
    if (cluster?.skipTLSVerify) options.rejectUnauthorized = false;
    if (cluster?.tlsServerName) options.servername = cluster.tlsServerName;
    const ca = fileOrData(cluster?.caFile, cluster?.caData);
    if (ca) options.ca = ca;
    const cert = fileOrData(user.certFile, user.certData);
    if (cert) options.cert = cert;
    const key = fileOrData(user.keyFile, user.keyData);
    if (key) options.key = key;
    const headers = (options.headers ??= {}) as Record<string, string>;
    if (user.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;

    this.authenticator ??= authenticatorFor(user);
    await (await this.authenticator)?.applyAuthentication(user, options);
    if (user.token) headers.Authorization = `Bearer ${user.token}`;
    if (user.username) options.auth = `${user.username}:${user.password ?? ''}`;
  }

  /**
   * The same config as a client-node `KubeConfig`, for its generated API clients
   * (`makeApiClient`). Loads client-node in full on first call.
   */
  async toClientNode(): Promise<KubeConfig> {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [...this.clusters],
      users: [...this.users],
      contexts: [...this.contexts],
      currentContext: this.currentContext,
    });
    return kubeConfig;
  }

  private withAbsolutePaths(directory: string): ClusterConfig {
    const absolute = (file: string | undefined) => (file && !isAbsolute(file) ? join(directory, file) : file);
    return new ClusterConfig(
      this.clusters.map((cluster) => (cluster.caFile ? { ...cluster, caFile: absolute(cluster.caFile)! } : cluster)),
      this.users.map((user) =>
        user.certFile || user.keyFile
          ? {
              ...user,
              ...(user.certFile ? { certFile: absolute(user.certFile)! } : {}),
              ...(user.keyFile ? { keyFile: absolute(user.keyFile)! } : {}),
            }
          : user,
      ),
      this.contexts,
      this.currentContext,
    );
  }
}

/** Auth providers applied by client-node's KubeConfig in full (they need its larger modules). */
function needsClientNode(user: User): boolean {
  const provider = user.authProvider as { name?: string; config?: Record<string, unknown> } | undefined;
  if (!provider || user.exec) return false;
  return !(provider.name === 'exec' || provider.config?.exec || provider.config?.tokenFile);
}

/** client-node's exec or token-file authenticator, loaded only when the user needs one. */
async function authenticatorFor(user: User): Promise<Authenticator | undefined> {
  if (!user.exec && !user.authProvider) return undefined;
  const { ExecAuth } = await import('@kubernetes/client-node/dist/exec_auth.js');
  const exec = new ExecAuth();
  if (exec.isAuthProvider(user)) return exec as Authenticator;
  if (!user.authProvider) return undefined;
  const { FileAuth } = await import('@kubernetes/client-node/dist/file_auth.js');
  return new FileAuth() as Authenticator;
}

function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (file) return readFileSync(file);
  return data ? Buffer.from(data, 'base64') : undefined;
}
