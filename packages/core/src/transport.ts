import type { KubeConfigSource } from './cluster-config.js';
import { silentLogger, type RuntimeLogger } from './logger.js';
import { systemClock } from './clock.js';
import { Connectivity } from './connectivity.js';
import { CredentialRefresh } from './credential-refresh.js';
import { KubeApiError, type FailedRequest } from './errors.js';
import { ProtocolFallback, type Exchange, type Exchanger, type ResponseHead } from './exchange.js';
import { ExchangeGuard, type Answered } from './exchange-guard.js';
import { readCredentials, type Credentials } from './kubeconfig-credentials.js';
import { PROTOBUF_WATCH_ACCEPT } from './protobuf/envelope.js';
import { loadProtobufSchema, type ProtobufSchema } from './protobuf/schema.js';
import { createExchanger, loadHttp2Exchanger } from './protocol-choice.js';
import type { Http2Exchanger } from './http2-exchange.js';
import { encodeBody, queryString, requestHeaders } from './request-encoding.js';
import { DEFAULT_RETRY_AFTER_ATTEMPTS, retryAfterSeconds, retryAfterWait } from './retry-after.js';
import { sleep } from './sleep.js';
import { ThrottleWindows, type ThrottleWindow } from './throttle-windows.js';
import type { TransportOptions } from './transport-options.js';
import type {
  Query,
  RequestOptions,
  StreamedTransportResponse,
  StreamOptions,
  TransportResponse,
} from './transport-requests.js';
import { decodeWatch } from './watch-decoding.js';

/**
 * The HTTP path to one API server as one user. This class holds what every request shares,
 * written once: auth (`CredentialRefresh`: read again periodically when it can expire, and
 * once on a 401), the resend rules (`retry-after.ts`, `ThrottleWindows`), the deadline and
 * the abort signal (`ExchangeGuard`), errors and connectivity, the watch decoding
 * (`decodeWatch`). Below it an `Exchanger` holds the connections: over TLS by default HTTP/2 as
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
  private readonly prefix: string;
  private readonly log: RuntimeLogger;
  private readonly auth: CredentialRefresh;
  private readonly exchanger: Exchanger;
  private readonly throttle: ThrottleWindows;
  private closed = false;

  private constructor(
    kubeConfig: KubeConfigSource,
    /** The API server's URL. */
    readonly server: string,
    credentials: Credentials,
    private readonly options: TransportOptions,
    Http2: typeof Http2Exchanger | undefined,
  ) {
    const url = new URL(server);
    const secure = url.protocol === 'https:';
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port) || (secure ? 443 : 80);
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.log = options.logger ?? silentLogger;
    this.protobuf = options.protobuf ?? true;
    this.auth = new CredentialRefresh(kubeConfig, credentials, {
      refreshMs: options.authRefreshMs ?? 60_000,
      userAgent: options.userAgent,
      log: this.log,
      onTlsRotated: (next) => this.exchanger.rotate(next),
    });
    this.exchanger = createExchanger({ server, secure, hostname, port }, credentials, options, this.log, Http2);
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
    const credentials = await readCredentials(kubeConfig);
    const secure = new URL(cluster.server).protocol === 'https:';
    const Http2 = await loadHttp2Exchanger(secure, credentials, options);
    return new Transport(kubeConfig, cluster.server, credentials, options, Http2);
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
    const answered = await this.send('GET', path, request, failed, true);
    const fail = (error: unknown) => this.failure(failed, error, signal, answered.guard);
    yield* decodeWatch<T>(answered, failed, signal, schema, fail, options.onOpen);
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
    if (this.auth.due) await this.auth.refresh();
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
      let guard: ExchangeGuard | undefined;
      let head: ResponseHead;
      try {
        const headers = requestHeaders(this.auth.headers, payload, options);
        exchange = this.exchanger.open({ method, target, headers, payload, watch });
        guard = new ExchangeGuard(
          exchange,
          signal,
          waitedMs && timeoutMs ? Math.max(1, timeoutMs - waitedMs) : timeoutMs,
        );
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
        refresh = head.status === 401 && attempt === 1 && this.auth.credentials.expiring;
        if (!refresh) {
          const attempts = this.options.retryAfterAttempts ?? DEFAULT_RETRY_AFTER_ATTEMPTS;
          waitMs = retryAfterWait(method, head, throttled, Date.now() - startedAt, timeoutMs, attempts);
        }
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
        await this.auth.refresh();
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

  private failure(
    failed: FailedRequest,
    error: unknown,
    signal: AbortSignal | undefined,
    guard?: ExchangeGuard,
  ): unknown {
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
}
