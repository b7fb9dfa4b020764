import type http2 from 'node:http2';
import http, { type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { KubeConfigSource } from './cluster-config.js';
import { silentLogger, type RuntimeLogger } from './logger.js';
import { Connectivity } from './connectivity.js';
import { readCredentials, tlsChanged, type Credentials } from './credentials.js';
import { KubeApiError, type FailedRequest } from './errors.js';
import { JsonLineDecoder } from './json-lines.js';
import { Http2Exchange } from './http2-exchange.js';
import { DEFAULT_HTTP2_PING_TIMEOUT_MS, DEFAULT_HTTP2_READ_IDLE_MS } from './http2-liveness.js';
import { Http2Sessions } from './http2-sessions.js';
import { errorBody, isProtobuf, PROTOBUF_WATCH_ACCEPT } from './protobuf/envelope.js';
import { loadProtobufSchema, type ProtobufSchema } from './protobuf/schema.js';
import { ProtobufWatchDecoder } from './protobuf/watch-frames.js';
import { ProtobufDecodeError } from './protobuf/wire-reader.js';

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

/** A streamed response as the line decoder reads it, over HTTP/1.1 or HTTP/2. */
interface StreamedResponse {
  /** Status, Retry-After and Content-Type, once the head arrived (rejects when no answer came). */
  head(): Promise<{ status: number; retryAfter: string | string[] | undefined; contentType: string | undefined }>;
  body: AsyncIterable<Buffer>;
  readBody(): Promise<Buffer>;
  /** Each chunk read (HTTP/2: the connection is alive). */
  onData?(): void;
  /** The deadline's error, when it cut the response. */
  fired(): Error | undefined;
  /** Frees the connection or stream, however the read ended. */
  release(): void;
}

export interface TransportOptions {
  /**
   * HTTP/2 when the API server offers it over TLS (default false): one multiplexed
   * connection, checked by PING when silent. Off by default because it measured no faster
   * than the HTTP/1.1 pools for an operator's work and peaked ~13 MB higher
   * (docs/BENCHMARKS.md, "HTTP/2"). DISABLE_HTTP2 in the environment (client-go's switch)
   * overrides it; a proxy and a server whose ALPN gives no h2 keep HTTP/1.1 too.
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

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Below the API server's 90 s idle timeout, so a request rarely meets a socket the server is closing. */
const FREE_SOCKET_TIMEOUT_MS = 60_000;

/**
 * The HTTP path to one API server as one user. By default HTTP/1.1: a keep-alive pool for
 * requests and another for watches (a watch holds its connection for minutes and must never
 * wait behind, or starve, ordinary requests). With `http2: true` over TLS, HTTP/2 as
 * client-go: requests and watches are streams multiplexed on one connection, each
 * connection checked by PING when silent. TLS material and auth come from the kubeconfig
 * (`ClusterConfig` or client-node's `KubeConfig`); auth that can expire is read again
 * periodically and once on a 401.
 */
export class Transport {
  /** Requests and watch streams opened, for tests and metrics. */
  readonly stats = { requests: 0, watches: 0 };
  /** Whether the API server answers: down on a request with no response, up on any response. */
  readonly connectivity = new Connectivity();
  /** Built-in kinds are listed and watched in protobuf (TransportOptions.protobuf). */
  readonly protobuf: boolean;
  private readonly secure: boolean;
  private readonly hostname: string;
  private readonly port: number;
  private readonly prefix: string;
  private readonly log: RuntimeLogger;
  private sessions?: Http2Sessions;
  private requestAgent!: http.Agent;
  private watchAgent!: http.Agent;
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
    this.createAgents();
    this.sessions = this.createSessions();
  }

  /** 'h2' once a connection negotiated it, 'http/1.1' when that is the path, undefined before the first connection. */
  get protocol(): 'h2' | 'http/1.1' | undefined {
    if (!this.sessions) return 'http/1.1';
    return this.sessions.negotiated ? 'h2' : undefined;
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
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? 60_000;
    const failed = { method, path };
    const exchange = this.sessions && (await this.openHttp2(method, path, options, failed, timeoutMs));
    if (exchange) {
      try {
        const status = Number((await exchange.response)[':status']);
        return { status, headers: await exchange.response, body: await exchange.readBody() };
      } catch (error) {
        throw this.failure(failed, error, options.signal, exchange.fired);
      } finally {
        exchange.clear();
      }
    }
    const { res, req } = await this.open(method, path, options, this.requestAgent, failed, timeoutMs);
    try {
      return { status: res.statusCode ?? 0, headers: res.headers, body: await readBody(res) };
    } catch (error) {
      throw this.failure(failed, error, options.signal, deadlines.get(req)?.fired);
    } finally {
      clearDeadline(req);
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
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? 60_000;
    const failed = { method, path };
    const fail = (error: unknown, fired: Error | undefined) => this.failure(failed, error, options.signal, fired);
    const exchange = this.sessions && (await this.openHttp2(method, path, options, failed, timeoutMs));
    if (exchange) {
      const head = await exchange.response.catch((error: unknown) => {
        exchange.clear();
        throw fail(error, exchange.fired);
      });
      const stream = exchange.stream!;
      return {
        status: Number(head[':status']),
        headers: head,
        chunks: (async function* () {
          try {
            for await (const chunk of stream) {
              exchange.read();
              yield chunk as Buffer;
            }
          } catch (error) {
            throw fail(error, exchange.fired);
          }
        })(),
        readBody: () => exchange.readBody().catch((error: unknown) => Promise.reject(fail(error, exchange.fired))),
        release: () => {
          exchange.clear();
          exchange.cut();
        },
      };
    }
    const { res, req } = await this.open(method, path, options, this.requestAgent, failed, timeoutMs);
    return {
      status: res.statusCode ?? 0,
      headers: res.headers,
      chunks: (async function* () {
        try {
          for await (const chunk of res) yield chunk as Buffer;
          if (!res.complete) throw new Error('the connection closed before the response was complete');
        } catch (error) {
          throw fail(error, deadlines.get(req)?.fired);
        }
      })(),
      readBody: () => readBody(res).catch((error: unknown) => Promise.reject(fail(error, deadlines.get(req)?.fired))),
      release: () => {
        clearDeadline(req);
        if (!res.complete) res.destroy();
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
    this.sessions?.destroy(true);
    this.requestAgent.destroy();
    this.watchAgent.destroy();
  }

  private get refreshMs(): number {
    return this.options.authRefreshMs ?? 60_000;
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
    const exchange = this.sessions && (await this.openHttp2('GET', path, request, failed));
    if (exchange) {
      yield* this.decodeLines<T>(
        {
          head: async () => {
            const head = await exchange.response;
            return {
              status: Number(head[':status']),
              retryAfter: head['retry-after'],
              contentType: head['content-type'],
            };
          },
          body: exchange.stream!,
          readBody: () => exchange.readBody(),
          onData: () => exchange.read(),
          fired: () => exchange.fired,
          release: () => {
            exchange.clear();
            exchange.cut();
          },
        },
        failed,
        signal,
        schema,
      );
      return;
    }
    const { res, req } = await this.open('GET', path, request, this.watchAgent, failed);
    yield* this.decodeLines<T>(
      {
        head: () =>
          Promise.resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            contentType: res.headers['content-type'],
          }),
        body: res,
        readBody: () => readBody(res),
        fired: () => deadlines.get(req)?.fired,
        release: () => {
          if (!res.complete) res.destroy();
        },
      },
      failed,
      signal,
      schema,
    );
  }

  /** A streamed response's values (JSON lines or protobuf frames), whichever protocol carries it. */
  private async *decodeLines<T>(
    response: StreamedResponse,
    failed: FailedRequest,
    signal: AbortSignal | undefined,
    schema: ProtobufSchema | undefined,
  ): AsyncGenerator<T, void> {
    let decoder: { write(chunk: Buffer): unknown[]; end(): unknown } = new JsonLineDecoder<T>();
    try {
      const { status, retryAfter, contentType } = await response.head();
      if (status >= 400) {
        const body = await response.readBody();
        throw KubeApiError.fromResponse(failed, status, errorBody(body, contentType, schema), retryAfter);
      }
      if (schema && isProtobuf(contentType)) decoder = new ProtobufWatchDecoder(schema);
      for await (const chunk of response.body) {
        response.onData?.();
        for (const value of decoder.write(chunk)) {
          if (signal?.aborted) throw signal.reason;
          yield value as T;
        }
      }
    } catch (error) {
      throw error instanceof KubeApiError || error instanceof SyntaxError || error instanceof ProtobufDecodeError
        ? error
        : this.failure(failed, error, signal, response.fired());
    } finally {
      response.release();
    }
    // Aborted as the response completed: nothing was cut, but the caller asked to stop.
    if (signal?.aborted) throw signal.reason;
    const last = decoder.end();
    if (last !== undefined) yield last as T;
  }

  /** Sends the request and resolves with the response head; retries once on a stale socket or a 401. */
  private async open(
    method: string,
    path: string,
    options: RequestOptions,
    agent: http.Agent,
    failed: FailedRequest,
    timeoutMs?: number,
  ): Promise<{ res: IncomingMessage; req: ClientRequest }> {
    if (this.closed) throw new Error(`${method} ${path}: the transport is closed`);
    if (Date.now() >= this.authDueAt) await this.refreshAuth();
    const payload = encodeBody(options.body);
    const target = this.prefix + path + queryString(options.query);
    for (let attempt = 1; ; attempt++) {
      const req = this.send(method, target, payload, options, agent, timeoutMs);
      let res: IncomingMessage;
      try {
        res = await responseOf(req);
      } catch (error) {
        // No answer at all within the deadline: the connection may have died without closing
        // (a NAT or load balancer that dropped it), and its idle siblings with it.
        if (deadlines.get(req)?.fired) dropIdleSockets(agent);
        clearDeadline(req);
        // A kept-alive socket the server closed just as we reused it: safe to resend a read.
        const stale = req.reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET';
        if (attempt === 1 && stale && IDEMPOTENT.has(method) && !options.signal?.aborted) continue;
        throw this.failure(failed, error, options.signal, deadlines.get(req)?.fired);
      }
      this.connectivity.answered();
      if (res.statusCode === 401 && attempt === 1 && this.credentials.expiring) {
        res.resume();
        clearDeadline(req);
        await this.refreshAuth();
        continue;
      }
      return { res, req };
    }
  }

  private send(
    method: string,
    target: string,
    payload: Buffer | undefined,
    options: RequestOptions,
    agent: http.Agent,
    timeoutMs: number | undefined,
  ): ClientRequest {
    let headers: Record<string, string | number> = this.headers;
    if (payload || options.accept) headers = { ...headers, ...(options.accept ? { accept: options.accept } : {}) };
    if (payload) {
      headers['content-type'] = options.contentType ?? 'application/json';
      headers['content-length'] = payload.length;
    }
    const req = (this.secure ? https : http).request({
      hostname: this.hostname,
      port: this.port,
      path: target,
      method,
      agent,
      headers,
    });
    // Not http.request's `signal` option: Node passes it on to the socket it creates, so a
    // kept-alive socket would die with the first request's signal while serving another.
    const signal = options.signal;
    if (signal) {
      const abort = () => cut(req);
      if (signal.aborted) abort();
      else {
        signal.addEventListener('abort', abort, { once: true });
        req.once('close', () => signal.removeEventListener('abort', abort));
      }
    }
    if (timeoutMs) {
      const deadline: Deadline = {
        timer: setTimeout(() => {
          deadline.fired = Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
          cut(req);
        }, timeoutMs),
      };
      deadline.timer.unref();
      deadlines.set(req, deadline);
    }
    req.end(payload);
    return req;
  }

  /**
   * Sends the request on an HTTP/2 stream and waits for its head; resends once when the
   * server refused the stream unprocessed or on a 401. Undefined when ALPN chose HTTP/1.1:
   * then the transport uses HTTP/1.1 from now on.
   */
  private async openHttp2(
    method: string,
    path: string,
    options: RequestOptions,
    failed: FailedRequest,
    timeoutMs?: number,
  ): Promise<Http2Exchange | undefined> {
    if (this.closed) throw new Error(`${method} ${path}: the transport is closed`);
    if (Date.now() >= this.authDueAt) await this.refreshAuth();
    const payload = encodeBody(options.body);
    const target = this.prefix + path + queryString(options.query);
    for (let attempt = 1; ; attempt++) {
      const headers: http2.OutgoingHttpHeaders = {
        ...this.headers,
        ':method': method,
        ':path': target,
        ...(payload ? { 'content-type': options.contentType ?? 'application/json' } : {}),
        ...(options.accept ? { accept: options.accept } : {}),
      };
      const exchange = new Http2Exchange(this.sessions!, headers, payload, options.signal, timeoutMs);
      let status: number;
      try {
        status = Number((await exchange.response)[':status']);
      } catch (error) {
        exchange.clear();
        if (attempt === 1 && Http2Exchange.unprocessed(error) && !options.signal?.aborted) continue;
        throw this.failure(failed, error, options.signal, exchange.fired);
      }
      if (exchange.fallback) {
        exchange.clear();
        this.log.info(`the API server at ${this.server} does not offer HTTP/2 (ALPN); using HTTP/1.1`);
        this.sessions = undefined;
        return undefined;
      }
      this.connectivity.answered();
      if (status === 401 && attempt === 1 && this.credentials.expiring) {
        exchange.stream!.resume();
        exchange.clear();
        await this.refreshAuth();
        continue;
      }
      return exchange;
    }
  }

  private failure(failed: FailedRequest, error: unknown, signal: AbortSignal | undefined, fired?: Error): unknown {
    if (signal?.aborted) return signal.reason ?? error;
    const cause = fired ?? (error instanceof Error ? error : new Error(String(error)));
    const failure = KubeApiError.fromNetwork(failed, this.server, cause);
    if (!this.closed) this.connectivity.failed(failure);
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
      if (rotated) {
        // As client-go on certificate rotation: drop every connection made with the old one.
        this.requestAgent.destroy();
        this.watchAgent.destroy();
        this.createAgents();
        this.sessions?.destroy();
        if (this.sessions) this.sessions = this.createSessions();
      }
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

  /** The HTTP/2 path, unless plain HTTP, a proxy, or opted out. */
  private createSessions(): Http2Sessions | undefined {
    const wanted = this.options.http2 === true && !process.env['DISABLE_HTTP2'];
    if (!this.secure || this.credentials.proxyAgent || !wanted) return undefined;
    return new Http2Sessions(
      { hostname: this.hostname, port: this.port, tls: agentTls(true, this.credentials) as tls.ConnectionOptions },
      {
        readIdleMs: this.options.http2ReadIdleMs ?? DEFAULT_HTTP2_READ_IDLE_MS,
        pingTimeoutMs: this.options.http2PingTimeoutMs ?? DEFAULT_HTTP2_PING_TIMEOUT_MS,
      },
      (error) => this.log.warn(`HTTP/2 connection to ${this.server} closed: ${error.message}`),
    );
  }

  private createAgents(): void {
    const credentials = this.credentials;
    if (credentials.proxyAgent) {
      this.requestAgent = this.watchAgent = credentials.proxyAgent;
      return;
    }
    const common = { keepAlive: true, scheduling: 'lifo' as const, ...agentTls(this.secure, credentials) };
    const maxSockets = this.options.maxSockets ?? 32;
    const Agent = this.secure ? https.Agent : http.Agent;
    this.requestAgent = new Agent({
      ...common,
      maxSockets,
      maxFreeSockets: maxSockets,
      timeout: FREE_SOCKET_TIMEOUT_MS,
    });
    this.watchAgent = new Agent(common);
  }
}

/** Closes the agent's idle kept-alive sockets, so the next requests open fresh connections. */
function dropIdleSockets(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}

/**
 * The agents' TLS options: the CA, client certificate and key parsed once into one
 * SecureContext. Given as ca/cert/key, https.Agent would copy them into every request's
 * options and stringify them into its pool key (getName) on every request and socket
 * release, and tls.connect would parse them again for every new connection.
 */
function agentTls(secure: boolean, credentials: Credentials): https.AgentOptions {
  const { ca, cert, key, pfx, passphrase, ...rest } = credentials.tls;
  if (!secure) return credentials.tls;
  const material = Object.fromEntries(
    Object.entries({ ca, cert, key, pfx, passphrase }).filter(([, value]) => value !== undefined),
  );
  return { ...rest, secureContext: tls.createSecureContext(material) };
}

interface Deadline {
  timer: NodeJS.Timeout;
  fired?: Error;
}

const deadlines = new WeakMap<ClientRequest, Deadline>();

/**
 * Ends an exchange in flight. With no error object, and not once the response is complete:
 * then its socket has left the request for the pool and an 'error' on it would go unheard.
 */
function cut(req: ClientRequest): void {
  const res = (req as { res?: IncomingMessage }).res;
  if (!res?.complete) req.destroy();
}

function clearDeadline(req: ClientRequest): void {
  clearTimeout(deadlines.get(req)?.timer);
}

function responseOf(req: ClientRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
}

function readBody(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    res.once('error', reject);
    res.once('close', () => {
      if (!res.complete) reject(new Error('the connection closed before the response was complete'));
    });
  });
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
