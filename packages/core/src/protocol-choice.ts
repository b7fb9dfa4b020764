import type { Exchanger } from './exchange.js';
import { Http1Exchanger } from './http1-exchange.js';
import { Http2Exchanger } from './http2-exchange.js';
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

/** HTTP/2 over TLS with no proxy unless turned off, else HTTP/1.1. */
export function createExchanger(
  address: ServerAddress,
  credentials: Credentials,
  options: TransportOptions,
  log: RuntimeLogger,
): Exchanger {
  const { server, secure, hostname, port } = address;
  const http1 = (credentials: Credentials) =>
    new Http1Exchanger({ secure, hostname, port, maxSockets: options.maxSockets ?? 32 }, credentials);
  const wanted = options.http2 !== false && !process.env['DISABLE_HTTP2'];
  if (!secure || credentials.proxyAgent || !wanted) return http1(credentials);
  return new Http2Exchanger(
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
