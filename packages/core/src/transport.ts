import type { IncomingHttpHeaders } from 'node:http';
import type { KubeConfigSource } from './cluster-config.js';
import { silentLogger, type RuntimeLogger } from './logger.js';
import { systemClock } from './clock.js';
import { Connectivity } from './connectivity.js';
import { readCredentials, tlsChanged, type Credentials } from './credentials.js';
import { KubeApiError, type FailedRequest } from './errors.js';
import { JsonLineDecoder } from './json-lines.js';
import { ProtocolFallback, type Exchange, type Exchanger, type ResponseHead } from './exchange.js';
import { Http1Exchanger } from './http1-exchange.js';
import { Http2Exchanger } from './http2-exchange.js';
import { DEFAULT_HTTP2_PING_TIMEOUT_MS, DEFAULT_HTTP2_READ_IDLE_MS } from './http2-liveness.js';
import { errorBody, isProtobuf, PROTOBUF_WATCH_ACCEPT } from './protobuf/envelope.js';
import { loadProtobufSchema, type ProtobufSchema } from './protobuf/schema.js';
import { ProtobufWatchDecoder } from './protobuf/watch-frames.js';
import { ProtobufDecodeError } from './protobuf/wire-reader.js';
import { sleep } from './sleep.js';
import { ThrottleWindows, type ThrottleWindow } from './throttle-windows.js';

/** Sends of one request after 429 (or 5xx) with Retry-After, as client-go's maxRetries. */
export const DEFAULT_RETRY_AFTER_ATTEMPTS = 10;

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** A Buffer or string goes as is; anything else as JSON. */
  body?: unknown;
  /** Content type of the body (default application/json). */
  contentType?: string;
  /** The Accept header (default application/json). */
  accept?: string;
  signal?: AbortSignal;
  /** Deadline for the whole exchange, body included (default: the transport's requestTimeoutMs). */
  timeoutMs?: number;
  /** Told the status of the answer once its head came (a client span records it). */
  onStatus?: (status: number) => void;
}

/** How a watch stream is asked for and decoded. */
export interface StreamOptions {
  /**
   * Ask for protobuf (a built-in kind; never a custom resource), JSON if the server prefers.
   * Ignored when the transport's `protobuf` option is off.
   */
  protobuf?: boolean;
  /** Protobuf: never decode metadata.managedFields (the informer drops them anyway). */
  dropManagedFields?: boolean;
  /** A JSON Accept value of its own (e.g. METADATA_WATCH_ACCEPT); it rules out protobuf. */
  accept?: string;
  /** Called once the server accepted the stream (a status below 400), before any value: a quiet watch is open. */
  onOpen?: () => void;
}

export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A response whose body is read as it arrives (requestStreamed). */
export interface StreamedTransportResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body's chunks; a broken connection throws a KubeApiError. Read it, or readBody(), once. */
  chunks: AsyncIterable<Buffer>;
  readBody(): Promise<Buffer>;
  /** Ends the exchange (frees the connection, or cuts what is left of the body). Always call it. */
  release(): void;
}

export interface TransportOptions {
  /**
   * HTTP/2 when the API server offers it over TLS (default true, as client-go): one
   * multiplexed connection, checked by PING when silent, so a connection that died without
   * closing is found within 45 s whatever runs on it, and watches last client-go's 5 to 10
   * minutes (docs/RELIABILITY.md, "Half-open connections"). False, or DISABLE_HTTP2 set in
   * the environment (client-go's switch), keeps HTTP/1.1 pools; a proxy and a server whose
   * ALPN gives no h2 keep HTTP/1.1 too.
   */
  http2?: boolean;
  /** HTTP/2: PING a connection nothing was read on for this long (default 30 s, as client-go). */
  http2ReadIdleMs?: number;
  /** HTTP/2: close a connection whose PING gets no answer within this (default 15 s, as client-go). */
  http2PingTimeoutMs?: number;
  /** HTTP/1.1 connections for ordinary requests (default 32); watches have their own, uncapped. */
  maxSockets?: number;
  /** Default deadline of a request (default 60 s). */
  requestTimeoutMs?: number;
  /**
   * A request answered 429 (API Priority and Fairness: refused before it was handled) with a
   * Retry-After header, or a read answered 5xx with one, is sent again after the seconds
   * asked, up to this many times (default 10, as client-go; 0: never). A wait that would end past the request's deadline is not taken: the answer is
   * returned, its KubeApiError carries retryAfterSeconds, and the workqueue requeues the
   * object no sooner than that.
   */
  retryAfterAttempts?: number;
  /**
   * After a 429, send that resource's requests one at a time, widening by one per answer once
   * the Retry-After has passed, until back where the throttling began (default true;
   * `ThrottleWindows`): the server is not met by a crowd of retries, so its Retry-After stays
   * short and nothing sleeps long past the limit's lift. False: client-go's way, each refused
   * request waits on its own and the others go as they come.
   */
  throttleWindows?: boolean;
  /** How often credentials that can expire (exec plugin, OIDC, token file) are read again (default 60 s). */
  authRefreshMs?: number;
  userAgent?: string;
  logger?: RuntimeLogger;
  /**
   * LIST and WATCH built-in kinds (k8s.io/api) in protobuf, as client-go does (default
   * true): the API server encodes it for about two thirds of the CPU JSON costs it, and
   * Nestor decodes it faster than JSON.parse (docs/BENCHMARKS.md, "Protobuf"). Objects come
   * out exactly as their JSON. Custom resources and every write are JSON either way.
   * False is controller-runtime's `ContentType: "application/json"`: JSON for everything.
   */
  protobuf?: boolean;
}

/** An exchange whose head came, with its deadline and signal still watching it. */
interface Answered {
  head: ResponseHead;
  exchange: Exchange;
  guard: Guard;
  /** The throttled resource's window whose place this exchange holds until it is released. */
  window?: ThrottleWindow | undefined;
}

/**
 * The HTTP path to one API server as one user. This class holds what every request shares,
 * written once: auth (read again periodically when it can expire, and once on a 401), the
 * resend rules, the deadline and the abort signal, errors and connectivity, the watch
 * decoding. Below it an `Exchanger` holds the connections: over TLS by default HTTP/2 as
 * client-go (`Http2Exchanger`: requests and watches multiplexed as streams on one
 * connection, checked by PING when silent); with `http2: false`, DISABLE_HTTP2, a proxy or
 * plain HTTP, HTTP/1.1 keep-alive pools (`Http1Exchanger`: one for requests, one for
 * watches). TLS material and auth come from the kubeconfig
 * (`ClusterConfig` or client-node's `KubeConfig`).
 */
export class Transport {
  /**
   * Requests and watch streams opened, answers waited out as Retry-After asked
   * (`throttled`), requests that waited for a throttled resource's window (`held`), and
   * requests not finished yet (`inFlight`), for tests and metrics.
   */
  readonly stats = { requests: 0, watches: 0, throttled: 0, held: 0, inFlight: 0 };
  /** Whether the API server answers: down on a request with no response, up on any response. */
  readonly connectivity = new Connectivity();
  /** Built-in kinds are listed and watched in protobuf (TransportOptions.protobuf). */
  readonly protobuf: boolean;
  private readonly secure: boolean;
  private readonly hostname: string;
  private readonly port: number;
  private readonly prefix: string;
  private readonly log: RuntimeLogger;
  private readonly exchanger: Exchanger;
  private readonly throttle: ThrottleWindows;
  private headers!: Record<string, string>;
  private authDueAt: number;
  private refreshing?: Promise<void>;
  private closed = false;

  private constructor(
    private readonly kubeConfig: KubeConfigSource,
    /** The API server's URL. */
    readonly server: string,
    private credentials: Credentials,
    private readonly options: TransportOptions,
  ) {
    const url = new URL(server);
    this.secure = url.protocol === 'https:';
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = Number(url.port) || (this.secure ? 443 : 80);
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.log = options.logger ?? silentLogger;
    this.protobuf = options.protobuf ?? true;
    this.authDueAt = credentials.expiring ? Date.now() + this.refreshMs : Infinity;
    this.useCredentials(credentials);
    this.exchanger = this.createExchanger();
    this.throttle = new ThrottleWindows(systemClock, (resource, open) =>
      open
        ? this.log.info(`the API server throttles ${resource} (429): its requests go one at a time until it takes more`)
        : this.log.info(`the API server takes ${resource} requests again as they come`),
    );
  }

  /**
   * Resources the API server throttles now: after a 429 their requests go one at a time,
   * widening as it answers (TransportOptions.throttleWindows), e.g. `['configmaps']`.
   */
  get throttledResources(): string[] {
    return this.throttle.resources();
  }

  /** 'h2' once a connection negotiated it, 'http/1.1' when that is the path, undefined before the first connection. */
  get protocol(): 'h2' | 'http/1.1' | undefined {
    return this.exchanger.protocol;
  }

  /**
   * True once the path to the server checks its own connections (HTTP/2 PING): a watch on
   * a connection that died without closing is then found without the watch's end, and
   * watches can last as long as client-go's. False on HTTP/1.1 and before the first connection.
   */
  get checksLiveness(): boolean {
    return this.exchanger.protocol === 'h2';
  }

  static async fromKubeConfig(kubeConfig: KubeConfigSource, options: TransportOptions = {}): Promise<Transport> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) {
      throw new Error('the kubeconfig has no current cluster: set its current-context (kubectl config use-context)');
    }
    return new Transport(kubeConfig, cluster.server, await readCredentials(kubeConfig), options);
  }

  /** One request; the body is read whole. Never throws on an HTTP status, only on no response. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<TransportResponse> {
    this.stats.requests++;
    this.stats.inFlight++;
    try {
      const failed = { method, path };
      const { head, exchange, guard, window } = await this.send(
        method,
        path,
        options,
        failed,
        false,
        this.timeoutOf(options),
      );
      try {
        options.onStatus?.(head.status);
        return { status: head.status, headers: head.headers, body: await exchange.readBody() };
      } catch (error) {
        throw this.failure(failed, error, options.signal, guard);
      } finally {
        guard.clear();
        exchange.release();
        window?.leave();
      }
    } finally {
      this.stats.inFlight--;
    }
  }

  /**
   * One request whose body is handed over as it arrives, for a large answer (a LIST served
   * in one page) decoded without being held whole. The deadline covers the whole body.
   */
  async requestStreamed(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<StreamedTransportResponse> {
    this.stats.requests++;
    this.stats.inFlight++;
    const failed = { method, path };
    let answered: Answered;
    try {
      answered = await this.send(method, path, options, failed, false, this.timeoutOf(options));
    } catch (error) {
      this.stats.inFlight--;
      throw error;
    }
    const { head, exchange, guard, window } = answered;
    options.onStatus?.(head.status);
    let released = false;
    const fail = (error: unknown) => this.failure(failed, error, options.signal, guard);
    return {
      status: head.status,
      headers: head.headers,
      chunks: (async function* () {
        try {
          yield* exchange.body;
        } catch (error) {
          throw fail(error);
        }
      })(),
      readBody: () => exchange.readBody().catch((error: unknown) => Promise.reject(fail(error))),
      release: () => {
        guard.clear();
        exchange.release();
        if (!released) {
          this.stats.inFlight--;
          window?.leave();
        }
        released = true;
      },
    };
  }

  /** A request whose JSON answer is returned; a status >= 400 throws a KubeApiError. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { status, headers, body } = await this.request(method, path, options);
    if (status >= 400) throw KubeApiError.fromResponse({ method, path }, status, body, headers['retry-after']);
    return (body.length ? JSON.parse(body.toString('utf8')) : undefined) as T;
  }

  /**
   * A streaming GET (a watch) as its values, decoded as they come off the socket: JSON
   * lines, or with `protobuf` the length-prefixed protobuf frames of a built-in kind's watch
   * (decoded to the same objects), whichever the server answers with. Throws a KubeApiError
   * for a status >= 400 or a broken connection; ends when the server ends the stream.
   * Breaking out of the loop, or `signal`, closes it.
   */
  stream<T = unknown>(
    path: string,
    query: Query = {},
    signal?: AbortSignal,
    options: StreamOptions = {},
  ): AsyncIterable<T> {
    return { [Symbol.asyncIterator]: () => this.lines<T>(path, query, signal, options) };
  }

  /** Closes every connection; later calls fail. */
  close(): void {
    this.closed = true;
    this.throttle.close(new Error('the transport is closed'));
    this.exchanger.close();
  }

  private get refreshMs(): number {
    return this.options.authRefreshMs ?? 60_000;
  }

  private timeoutOf(options: RequestOptions): number {
    return options.timeoutMs ?? this.options.requestTimeoutMs ?? 60_000;
  }

  private async *lines<T>(
    path: string,
    query: Query,
    signal: AbortSignal | undefined,
    options: StreamOptions,
  ): AsyncGenerator<T, void> {
    this.stats.watches++;
    const failed = { method: 'GET', path, watch: query.watch === true || query.watch === 'true' };
    let schema: ProtobufSchema | undefined;
    if (options.protobuf && !options.accept && this.protobuf) {
      schema = await loadProtobufSchema();
      if (options.dropManagedFields) schema = schema.withoutManagedFields();
    }
    const request: RequestOptions = {
      query,
      ...(signal ? { signal } : {}),
      ...(schema ? { accept: PROTOBUF_WATCH_ACCEPT } : options.accept ? { accept: options.accept } : {}),
    };
    // No deadline: a watch lasts as long as the server keeps it (its timeoutSeconds).
    yield* this.decodeLines<T>(
      await this.send('GET', path, request, failed, true),
      failed,
      signal,
      schema,
      options.onOpen,
    );
  }

  /** A streamed response's values (JSON lines or protobuf frames), whichever protocol carries it. */
  private async *decodeLines<T>(
    answered: Answered,
    failed: FailedRequest,
    signal: AbortSignal | undefined,
    schema: ProtobufSchema | undefined,
    onOpen?: () => void,
  ): AsyncGenerator<T, void> {
    const { head, exchange, guard } = answered;
    let decoder: { write(chunk: Buffer): unknown[]; end(): unknown } = new JsonLineDecoder<T>();
    try {
      const { status, headers } = head;
      const contentType = headers['content-type'];
      if (status >= 400) {
        const body = await exchange.readBody();
        throw KubeApiError.fromResponse(failed, status, errorBody(body, contentType, schema), headers['retry-after']);
      }
      if (schema && isProtobuf(contentType)) decoder = new ProtobufWatchDecoder(schema);
      onOpen?.();
      for await (const chunk of exchange.body) {
        for (const value of decoder.write(chunk)) {
          if (signal?.aborted) throw signal.reason;
          yield value as T;
        }
      }
    } catch (error) {
      throw error instanceof KubeApiError || error instanceof SyntaxError || error instanceof ProtobufDecodeError
        ? error
        : this.failure(failed, error, signal, guard);
    } finally {
      guard.clear();
      exchange.release();
    }
    // Aborted as the response completed: nothing was cut, but the caller asked to stop.
    if (signal?.aborted) throw signal.reason;
    const last = decoder.end();
    if (last !== undefined) yield last as T;
  }

  /**
   * Sends the request on whichever protocol the exchanger speaks and resolves once the
   * response head came. Sends it again, once, when the exchange says the server never
   * processed it (a stale kept-alive socket for a read, a refused HTTP/2 stream), or on a
   * 401 with credentials that can expire, read again first. An answer asking to come back
   * later (429, or 5xx with Retry-After) is waited out as asked and sent again (retryAfterWait).
   */
  private async send(
    method: string,
    path: string,
    options: RequestOptions,
    failed: FailedRequest,
    watch: boolean,
    timeoutMs?: number,
  ): Promise<Answered> {
    if (this.closed) throw new Error(`${method} ${path}: the transport is closed`);
    if (Date.now() >= this.authDueAt) await this.refreshAuth();
    const payload = encodeBody(options.body);
    const target = this.prefix + path + queryString(options.query);
    const signal = options.signal;
    const startedAt = Date.now();
    let throttled = 0;
    for (let attempt = 1; ; attempt++) {
      // A throttled resource's place, held until the answer is read (APF holds the seat as long).
      const window = watch ? undefined : this.throttle.windowOf(path);
      const waitedMs = window ? await this.enter(window, failed, signal, timeoutMs, startedAt) : 0;
      let exchange: Exchange | undefined;
      let guard: Guard | undefined;
      let head: ResponseHead;
      try {
        const headers = this.headersFor(payload, options);
        exchange = this.exchanger.open({ method, target, headers, payload, watch });
        guard = new Guard(exchange, signal, waitedMs && timeoutMs ? Math.max(1, timeoutMs - waitedMs) : timeoutMs);
        head = await exchange.head;
      } catch (error) {
        window?.leave();
        // Refused before it was sent (a path or header Node will not send): not the server.
        if (!exchange) throw error;
        guard?.clear();
        // The server chose HTTP/1.1 before anything was sent: not an attempt.
        if (error instanceof ProtocolFallback) attempt--;
        else if (attempt > 1 || signal?.aborted || !exchange.resendable(error)) {
          throw this.failure(failed, error, signal, guard);
        }
        continue;
      }
      let refresh: boolean;
      let waitMs: number | undefined;
      try {
        this.connectivity.answered();
        if (head.status === 429 && !watch && this.options.throttleWindows !== false) {
          this.throttle.throttled(path, (retryAfterSeconds(head) ?? 1) * 1000, this.stats.inFlight);
        }
        // A 401 was refused before API Priority and Fairness saw it: it says nothing of room.
        if (window && head.status !== 429 && head.status !== 401) window.answered();
        refresh = head.status === 401 && attempt === 1 && this.credentials.expiring;
        if (!refresh) waitMs = this.retryAfterWait(method, head, throttled, Date.now() - startedAt, timeoutMs);
      } catch (error) {
        window?.leave();
        guard.clear();
        exchange.discard();
        throw error;
      }
      if (!refresh && waitMs === undefined) return { head, exchange, guard, window };
      window?.leave();
      guard.clear();
      exchange.discard();
      if (refresh) {
        await this.refreshAuth();
        continue;
      }
      throttled++;
      this.stats.throttled++;
      await sleep(waitMs!, signal);
      if (signal?.aborted) throw this.failure(failed, new Error('aborted'), signal);
      attempt = 0; // a new send: the resend-once rule applies to it afresh
    }
  }

  /**
   * The ms to wait before sending again when the server asked for it (Retry-After in whole
   * seconds, as client-go reads it) on a 429, or on a 5xx to a read (a write may have been
   * done), while retries are left and the wait ends within the request's deadline; else
   * undefined: the answer goes to the caller (and its workqueue waits as long).
   */
  private retryAfterWait(
    method: string,
    head: ResponseHead,
    throttled: number,
    elapsedMs: number,
    timeoutMs: number | undefined,
  ): number | undefined {
    const read = method === 'GET' || method === 'HEAD';
    if (head.status !== 429 && !(head.status >= 500 && read)) return undefined;
    if (throttled >= (this.options.retryAfterAttempts ?? DEFAULT_RETRY_AFTER_ATTEMPTS)) return undefined;
    const seconds = retryAfterSeconds(head);
    if (seconds === undefined) return undefined;
    const waitMs = seconds * 1000;
    if (timeoutMs !== undefined && elapsedMs + waitMs >= timeoutMs) return undefined;
    return waitMs;
  }

  /**
   * Waits for a throttled resource's window, and returns the ms it waited (taken off the
   * request's deadline); past the deadline it fails unsent.
   */
  private async enter(
    window: ThrottleWindow,
    failed: FailedRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    startedAt: number,
  ): Promise<number> {
    const left = timeoutMs ? Math.max(1, timeoutMs - (Date.now() - startedAt)) : undefined;
    const admitted = window.enter(signal, left);
    if (typeof admitted === 'number') return admitted;
    this.stats.held++;
    try {
      return await admitted;
    } catch (error) {
      // Never sent: not the server's silence, so the outage gate is not told.
      if (signal?.aborted) throw signal.reason ?? error;
      throw KubeApiError.fromNetwork(failed, this.server, error as Error);
    }
  }

  private headersFor(payload: Buffer | undefined, options: RequestOptions): Record<string, string> {
    if (!payload && !options.accept) return this.headers;
    const headers = { ...this.headers };
    if (options.accept) headers['accept'] = options.accept;
    if (payload) headers['content-type'] = options.contentType ?? 'application/json';
    return headers;
  }

  private failure(failed: FailedRequest, error: unknown, signal: AbortSignal | undefined, guard?: Guard): unknown {
    if (signal?.aborted) return signal.reason ?? error;
    const fired = guard?.fired;
    const cause = fired ?? (error instanceof Error ? error : new Error(String(error)));
    const failure = KubeApiError.fromNetwork(failed, this.server, cause);
    // A deadline passed, but the server answered other requests since this one was sent: it is
    // slow (a slow etcd, a slow webhook), not gone, and the outage gate must not hold for it.
    const slow = fired !== undefined && this.connectivity.answeredSince(guard!.sentAt);
    // The server ended this request itself (see Exchange.resetByServer): it spoke, it is not gone.
    const reset = fired === undefined && guard?.exchange.resetByServer(error) === true;
    if (!this.closed && !slow && !reset) this.connectivity.failed(failure);
    return failure;
  }

  /** Reads the auth again, once for all callers waiting on it. */
  private refreshAuth(): Promise<void> {
    this.refreshing ??= this.reloadCredentials().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async reloadCredentials(): Promise<void> {
    try {
      const next = await readCredentials(this.kubeConfig);
      const rotated = tlsChanged(this.credentials.tls, next.tls);
      this.useCredentials(next);
      if (rotated) this.exchanger.rotate(next);
      this.authDueAt = Date.now() + this.refreshMs;
    } catch (error) {
      this.authDueAt = Date.now() + Math.min(this.refreshMs, 10_000);
      this.log.warn(
        `could not refresh the kubeconfig user's credentials; using the current ones: ${(error as Error).message}`,
      );
    }
  }

  private useCredentials(credentials: Credentials): void {
    this.credentials = credentials;
    this.headers = {
      accept: 'application/json',
      'user-agent': this.options.userAgent ?? 'nestor',
      ...credentials.headers,
    };
  }

  /** HTTP/2 over TLS with no proxy unless turned off, else HTTP/1.1. */
  private createExchanger(): Exchanger {
    const { secure, hostname, port } = this;
    const http1 = (credentials: Credentials) =>
      new Http1Exchanger({ secure, hostname, port, maxSockets: this.options.maxSockets ?? 32 }, credentials);
    const wanted = this.options.http2 !== false && !process.env['DISABLE_HTTP2'];
    if (!secure || this.credentials.proxyAgent || !wanted) return http1(this.credentials);
    return new Http2Exchanger(
      {
        hostname,
        port,
        liveness: {
          readIdleMs: this.options.http2ReadIdleMs ?? DEFAULT_HTTP2_READ_IDLE_MS,
          pingTimeoutMs: this.options.http2PingTimeoutMs ?? DEFAULT_HTTP2_PING_TIMEOUT_MS,
        },
        onDead: (error) => this.log.warn(`HTTP/2 connection to ${this.server} closed: ${error.message}`),
        onFallback: () =>
          this.log.info(`the API server at ${this.server} does not offer HTTP/2 (ALPN); using HTTP/1.1`),
        fallback: http1,
      },
      this.credentials,
    );
  }
}

/** Retry-After in whole seconds, as client-go reads it (an HTTP date or a fraction: none). */
function retryAfterSeconds(head: ResponseHead): number | undefined {
  const header = head.headers['retry-after'];
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return Number.isInteger(seconds) && seconds >= 1 ? seconds : undefined;
}

/** The deadline and the abort signal of one exchange, whatever carries it. */
class Guard {
  /** Set when the deadline cut the exchange. */
  fired?: Error;
  /** When the request was sent (`performance.now()`). */
  readonly sentAt = performance.now();
  private readonly timer?: NodeJS.Timeout;
  private removeAbort?: () => void;

  // The deadline and the abort listener are made by functions of their own: closures made in
  // one function share one context, and with both here each request's exchange outlived it
  // long enough to be promoted (8 writes in flight, each with a signal, 4,000 in all: peak heap
  // 37 MB with the closures together, 18 MB apart, as before the transport's split).
  constructor(
    readonly exchange: Exchange,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    if (timeoutMs) this.timer = deadline(this, exchange, timeoutMs);
    // Not http.request's `signal` option: Node passes it on to the socket it creates, so a
    // kept-alive socket would die with the first request's signal while serving another.
    if (signal?.aborted) exchange.cut();
    else if (signal) this.removeAbort = cutOnAbort(signal, exchange);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.removeAbort?.();
  }
}

function deadline(guard: Guard, exchange: Exchange, timeoutMs: number): NodeJS.Timeout {
  const timer = setTimeout(() => {
    guard.fired = Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
    exchange.expire();
  }, timeoutMs);
  timer.unref();
  return timer;
}

/** Cuts the exchange when `signal` aborts; returns what removes the listener. */
function cutOnAbort(signal: AbortSignal, exchange: Exchange): () => void {
  const abort = () => exchange.cut();
  signal.addEventListener('abort', abort, { once: true });
  return () => signal.removeEventListener('abort', abort);
}

function encodeBody(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
}

function queryString(query: Query | undefined): string {
  let out = '';
  for (const key in query) {
    const value = query[key];
    if (value !== undefined) out += `${out ? '&' : '?'}${key}=${encodeURIComponent(String(value))}`;
  }
  return out;
}
