// The connection-level bounds of the webhook port, the same for HTTP/1.1 and HTTP/2: a
// connection must start a request soon after it opens, and one with no request open is
// closed after a short idle time. Node enforces these for HTTP/1.1 (headersTimeout,
// keepAliveTimeout, requestTimeout); an HTTP/2 session has none of them, so they are kept
// here per session, and the streams one session may open at once are capped (rapid reset:
// without a cap, one connection opens thousands).
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Http2SecureServer, SecureServerOptions, ServerHttp2Session } from 'node:http2';
import { DEFAULT_BODY_TIMEOUT_MS } from './review-intake.js';

/** A new connection must send a request's headers within this (default 10 s). */
export const WEBHOOK_HEADERS_TIMEOUT_MS = 10_000;
/** A connection with no request open is closed after this (Node's HTTP/1.1 keep-alive default, 5 s). */
export const WEBHOOK_IDLE_TIMEOUT_MS = 5_000;
/** Streams one HTTP/2 connection may have open at once (Go's server allows 250; reviews are few and short). */
export const WEBHOOK_MAX_CONCURRENT_STREAMS = 32;

/** HTTPS (HTTP/1.1) server options with the bounds above. */
export function http1Limits(): Pick<
  HttpsServerOptions,
  'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval'
> {
  return {
    headersTimeout: WEBHOOK_HEADERS_TIMEOUT_MS,
    // The API server waits 30 s at most for any review: a request not read by then is dead.
    requestTimeout: DEFAULT_BODY_TIMEOUT_MS,
    keepAliveTimeout: WEBHOOK_IDLE_TIMEOUT_MS,
    // How often Node checks the two timeouts above (default 30 s, which would let them run 30 s late).
    connectionsCheckingInterval: 1_000,
  };
}

/** HTTP/2 server options: the stream cap, advertised in SETTINGS and enforced by nghttp2. */
export function http2Limits(): Pick<SecureServerOptions, 'settings'> {
  return { settings: { maxConcurrentStreams: WEBHOOK_MAX_CONCURRENT_STREAMS } };
}

/**
 * Watches every HTTP/2 session of `server`: closed (GOAWAY, then destroyed if it lingers)
 * once it has had no stream open for the idle time, or opened none within the headers
 * timeout. Returns the live sessions, for shutdown.
 */
export function limitHttp2Sessions(server: Http2SecureServer): Set<ServerHttp2Session> {
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    let open = 0;
    let timer: NodeJS.Timeout | undefined;
    const idleFor = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        session.close();
        // A peer that ignores GOAWAY and keeps streams half-open is cut off.
        setTimeout(() => session.destroy(), WEBHOOK_HEADERS_TIMEOUT_MS).unref();
      }, ms);
      timer.unref();
    };
    idleFor(WEBHOOK_HEADERS_TIMEOUT_MS);
    session.on('stream', (stream) => {
      open++;
      clearTimeout(timer);
      stream.once('close', () => {
        if (--open === 0 && !session.closed && !session.destroyed) idleFor(WEBHOOK_IDLE_TIMEOUT_MS);
      });
    });
    session.once('close', () => {
      clearTimeout(timer);
      sessions.delete(session);
    });
  });
  return sessions;
}
