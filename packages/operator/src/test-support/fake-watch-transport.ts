// A scripted stand-in for the Transport in unit tests of watch() and the informer: the test
// answers each LIST and drives each WATCH stream by hand.
import {
  KubeApiError,
  type KubeObject,
  type ObjectTooDeepError,
  type Query,
  type RequestOptions,
  type ResourceDescriptor,
} from '@nestor/core';
import type { WatchTransport } from '../runtime/watch/watch-options.js';

export interface FakeList {
  items: KubeObject[];
  metadata: { resourceVersion?: string; continue?: string };
  /** Items the protobuf decoder refused, as a protobuf page reports them. */
  refused?: ObjectTooDeepError[];
}

/** The kind these tests list and watch. */
export const ConfigMaps: ResourceDescriptor<KubeObject> = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};

/** A LIST page at `resourceVersion`, with a continue token when more pages follow. */
export function fakeList(resourceVersion: string, items: KubeObject[], continueToken?: string): FakeList {
  return { items, metadata: { resourceVersion, ...(continueToken ? { continue: continueToken } : {}) } };
}

/** One WATCH request: the test pushes its events and ends or breaks it. */
export class FakeStream implements AsyncIterable<unknown> {
  private readonly queue: Array<{ value?: unknown; error?: unknown; done?: boolean }> = [];
  private wake?: () => void;
  closed = false;

  constructor(
    readonly query: Query,
    private readonly signal: AbortSignal | undefined,
  ) {
    signal?.addEventListener('abort', () => this.settle({ error: signal.reason }), { once: true });
  }

  push(type: string, object: object): void {
    this.settle({ value: { type, object } });
  }

  /** An event whose object the protobuf decoder refused: its metadata only, and the error. */
  pushRefused(type: string, refused: ObjectTooDeepError): void {
    this.settle({ value: { type, object: refused.object, refused } });
  }

  end(): void {
    this.settle({ done: true });
  }

  fail(error: unknown): void {
    this.settle({ error });
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<unknown> {
    try {
      for (;;) {
        while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
        const next = this.queue.shift()!;
        if (next.error !== undefined) throw next.error;
        if (next.done) return;
        yield next.value;
      }
    } finally {
      this.closed = true;
    }
  }

  private settle(item: { value?: unknown; error?: unknown; done?: boolean }): void {
    this.queue.push(item);
    this.wake?.();
  }
}

export class FakeWatchTransport implements WatchTransport {
  /** Queries of every LIST, in order. */
  readonly lists: Query[] = [];
  readonly streams: FakeStream[] = [];
  /** Answers a LIST: a page, or an error to throw. A copy is returned, as the wire would. */
  onList: (query: Query) => FakeList | Error = () => ({ items: [], metadata: { resourceVersion: '1' } });
  /**
   * Whether a streamed sync (sendInitialEvents) is served like any WATCH, driven by the test.
   * Off by default: it is refused with 422 like an API server with WatchList off, and not
   * counted in `streams`.
   */
  watchList = false;
  /** Streamed syncs refused so far (watchList off). */
  refusedStreams = 0;
  /** As a Transport with protobuf on. The pages come through json() (no requestStreamed here). */
  readonly protobuf = true;
  /** As a Transport on HTTP/2, whose PING finds dead connections (false: HTTP/1.1). */
  checksLiveness = false;
  private streamWaiters: Array<() => void> = [];

  async json<T>(_method: string, _path: string, options: RequestOptions = {}): Promise<T> {
    if (options.signal?.aborted) throw options.signal.reason;
    this.lists.push(options.query ?? {});
    const answer = this.onList(options.query ?? {});
    if (answer instanceof Error) throw answer;
    const { refused, ...page } = answer;
    return { ...structuredClone(page), ...(refused ? { refused } : {}) } as T;
  }

  stream<T = unknown>(path: string, query: Query = {}, signal?: AbortSignal): AsyncIterable<T> {
    if (query.sendInitialEvents && !this.watchList) {
      this.refusedStreams++;
      const refusal = KubeApiError.fromResponse({ method: 'GET', path, watch: true }, 422, {
        kind: 'Status',
        code: 422,
        reason: 'Invalid',
        message: 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      });
      return {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(refusal) }),
      };
    }
    const stream = new FakeStream(query, signal);
    this.streams.push(stream);
    for (const wake of this.streamWaiters.splice(0)) wake();
    return stream as AsyncIterable<T>;
  }

  /** The n-th WATCH (0-based), once it has been opened. */
  async watchNumber(n: number): Promise<FakeStream> {
    while (this.streams.length <= n) await new Promise<void>((resolve) => this.streamWaiters.push(resolve));
    return this.streams[n]!;
  }
}

/** A ConfigMap-like object. */
export function object(name: string, resourceVersion: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', resourceVersion, ...extra },
  };
}

/** Lets pending promise callbacks and I/O callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
