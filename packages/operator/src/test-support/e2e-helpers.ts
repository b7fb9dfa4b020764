// Helpers for end-to-end tests of the watch and the informer against a real API server.
import { KubeConfig } from '@kubernetes/client-node';
import type { ApiClient, TestEnvironment } from '@nestor/testing';
export { parallel } from '@nestor/testing';
import type { Query, RequestOptions, StreamOptions, StreamedTransportResponse } from '@nestor/core';
import type { WatchTransport } from '../runtime/watch/watch-options.js';

export function configMapsPath(namespace: string, name = ''): string {
  return `/api/v1/namespaces/${namespace}/configmaps${name ? `/${name}` : ''}`;
}

export async function createConfigMap(
  client: ApiClient,
  namespace: string,
  name: string,
  extra: { labels?: Record<string, string>; ownerReferences?: object[]; data?: Record<string, string> } = {},
): Promise<{ metadata: { uid: string; resourceVersion: string } }> {
  const { data = { key: 'value' }, ...metadata } = extra;
  return client.request('POST', configMapsPath(namespace), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, ...metadata },
    data,
  });
}

/** A JSON merge patch of a ConfigMap (`{ data: { ... } }`, `{ metadata: { labels } }`). */
export async function patchConfigMap(client: ApiClient, namespace: string, name: string, patch: object): Promise<void> {
  await client.request('PATCH', configMapsPath(namespace, name), patch, 'application/merge-patch+json');
}

/**
 * Wraps a transport so a test decides when the next WATCH may open: while the gate is
 * closed, a reconnecting watch waits, and the test can change things it will miss.
 */
export class GatedTransport implements WatchTransport {
  /** The query of every WATCH asked for, in order. */
  readonly streamQueries: Query[] = [];
  private gate?: { promise: Promise<void>; open: () => void };

  constructor(private readonly inner: WatchTransport) {}

  close(): void {
    if (this.gate) return;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.gate = { promise, open };
  }

  open(): void {
    this.gate?.open();
    this.gate = undefined;
  }

  json<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return this.inner.json<T>(method, path, options);
  }

  /** Protobuf as the inner transport does it. */
  get protobuf(): boolean | undefined {
    return this.inner.protobuf;
  }

  requestStreamed(method: string, path: string, options?: RequestOptions): Promise<StreamedTransportResponse> {
    return this.inner.requestStreamed!(method, path, options);
  }

  stream<T = unknown>(path: string, query?: Query, signal?: AbortSignal, options?: StreamOptions): AsyncIterable<T> {
    const gate = this.gate?.promise;
    const inner = this.inner;
    this.streamQueries.push(query ?? {});
    return (async function* () {
      if (gate) await gate;
      yield* inner.stream<T>(path, query, signal, options);
    })();
  }
}

/**
 * A kubeconfig for a new ServiceAccount `name` in `namespace`, bound to the ClusterRole
 * `clusterRole` (default cluster-admin): an operator with a user of its own (in the audit
 * log, and for a FlowSchema to match), or with only the rights a test gives it.
 */
export async function serviceAccountKubeConfig(
  env: TestEnvironment,
  namespace: string,
  name: string,
  clusterRole = 'cluster-admin',
): Promise<{ kubeConfig: KubeConfig; user: string }> {
  await env.client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
  await env.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: `${namespace}-${name}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  const { status } = await env.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  );
  const cluster = env.kubeConfig.getCurrentCluster()!;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name, token: status.token }],
    contexts: [{ name: 'test', cluster: 'test', user: name }],
    currentContext: 'test',
  });
  return { kubeConfig, user: `system:serviceaccount:${namespace}:${name}` };
}

/**
 * Wraps a transport so the WATCHes of one path (`/api/v1/configmaps`: every namespace's)
 * deliver each value `lagMs` late, in order: that informer runs behind the others of its
 * kind, as a watch does whose connection is slow or whose informer is busy.
 */
export class LaggingTransport implements WatchTransport {
  constructor(
    private readonly inner: WatchTransport,
    private readonly path: string,
    private readonly lagMs: number,
  ) {}

  json<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return this.inner.json<T>(method, path, options);
  }

  get protobuf(): boolean | undefined {
    return this.inner.protobuf;
  }

  requestStreamed(method: string, path: string, options?: RequestOptions): Promise<StreamedTransportResponse> {
    return this.inner.requestStreamed!(method, path, options);
  }

  stream<T = unknown>(path: string, query?: Query, signal?: AbortSignal, options?: StreamOptions): AsyncIterable<T> {
    const values = this.inner.stream<T>(path, query, signal, options);
    if (path !== this.path) return values;
    const lagMs = this.lagMs;
    return (async function* () {
      for await (const value of values) {
        await new Promise((resolve) => setTimeout(resolve, lagMs));
        yield value;
      }
    })();
  }
}
