import type { Exchanger } from './exchange.js';
import { Http1Exchanger } from './http1-exchange.js';
import type { Http2Exchanger } from './http2-exchange.js';
import { DEFAULT_HTTP2_PING_TIMEOUT_MS, DEFAULT_HTTP2_READ_IDLE_MS } from './http2-liveness.js';
import type { Credentials } from './kubeconfig-credentials.js';
import type { RuntimeLogger } from './logger.js';
import type { TransportOptions } from './transport-options.js';

/** Where the API server listens, as the Transport read it from its URL. */
export interface ServerAddress {
  /** The URL, for logs. */
  server: string;
  secure: boolean;
  hostname: string;
  port: number;
}

/** Whether the path to the server is HTTP/2: over TLS, with no proxy, unless turned off. */
function triesHttp2(secure: boolean, credentials: Credentials, options: TransportOptions): boolean {
  const wanted = options.http2 !== false && !process.env['DISABLE_HTTP2'];
  return secure && !credentials.proxyAgent && wanted;
}

/**
 * The HTTP/2 exchanger's class when the path is HTTP/2, loaded then: on the HTTP/1.1 path
 * node:http2 and its session code stay out of the process (bench/floor.mjs).
 */
export async function loadHttp2Exchanger(
  secure: boolean,
  credentials: Credentials,
  options: TransportOptions,
): Promise<typeof Http2Exchanger | undefined> {
  return triesHttp2(secure, credentials, options) ? (await import('./http2-exchange.js')).Http2Exchanger : undefined;
}

/** HTTP/2 over TLS with no proxy unless turned off (`Http2` loaded by loadHttp2Exchanger), else HTTP/1.1. */
export function createExchanger(
  address: ServerAddress,
  credentials: Credentials,
  options: TransportOptions,
  log: RuntimeLogger,
  Http2: typeof Http2Exchanger | undefined,
): Exchanger {
  const { server, secure, hostname, port } = address;
  const http1 = (credentials: Credentials) =>
    new Http1Exchanger({ secure, hostname, port, maxSockets: options.maxSockets ?? 32 }, credentials);
  if (!Http2 || !triesHttp2(secure, credentials, options)) return http1(credentials);
  return new Http2(
    {
      hostname,
      port,
      liveness: {
        readIdleMs: options.http2ReadIdleMs ?? DEFAULT_HTTP2_READ_IDLE_MS,
        pingTimeoutMs: options.http2PingTimeoutMs ?? DEFAULT_HTTP2_PING_TIMEOUT_MS,
      },
      onDead: (error) => log.warn(`HTTP/2 connection to ${server} closed: ${error.message}`),
      onFallback: () => log.info(`the API server at ${server} does not offer HTTP/2 (ALPN); using HTTP/1.1`),
      fallback: http1,
    },
    credentials,
  );
}
