import type { RuntimeLogger } from './logger.js';

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
  /** HTTP/2: PING a connection nothing was read on for this long (default 5 s; client-go 30 s). */
  http2ReadIdleMs?: number;
  /** HTTP/2: close a connection whose PING gets no answer within this (default 10 s; client-go 15 s). */
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
   * After a 429, send that resource's requests one at a time, widening by one per window's
   * worth of answers once the Retry-After has passed, until back where the throttling began
   * (default true; `ThrottleWindows`): the server is not met by a crowd of retries, so its
   * Retry-After stays short and nothing sleeps long past the limit's lift. False: client-go's way, each refused
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
