// Helpers for end-to-end tests of the watch and the informer against a real API server.
import type { ApiClient } from '@nestor/testing';
export { parallel } from '@nestor/testing';
import type { Query, RequestOptions, StreamOptions, StreamedTransportResponse } from '@nestor/core';
import type { WatchTransport } from '../runtime/watch-options.js';

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
