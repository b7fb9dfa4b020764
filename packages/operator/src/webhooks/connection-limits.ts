// The connection-level bounds of the webhook port, the same for HTTP/1.1 and HTTP/2: a
// connection must start a request soon after it opens, and one with no request open is
// closed after a short idle time. Node enforces these for HTTP/1.1 (headersTimeout,
// keepAliveTimeout, requestTimeout); an HTTP/2 session has none of them, so they are kept
// here per session, and the streams one session may open at once are capped (rapid reset:
// without a cap, one connection opens thousands). Open connections are capped, in all and
// per remote address.
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Server, Socket } from 'node:net';
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
  'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval' | 'handshakeTimeout'
> {
  return {
    // A TLS handshake not done in this is dropped (Node's default: 120 s).
    handshakeTimeout: WEBHOOK_HEADERS_TIMEOUT_MS,
    headersTimeout: WEBHOOK_HEADERS_TIMEOUT_MS,
    // The API server waits 30 s at most for any review: a request not read by then is dead.
    requestTimeout: DEFAULT_BODY_TIMEOUT_MS,
    keepAliveTimeout: WEBHOOK_IDLE_TIMEOUT_MS,
    // How often Node checks the two timeouts above (default 30 s, which would let them run 30 s late).
    connectionsCheckingInterval: 1_000,
  };
}

/** HTTP/2 server options: the stream cap, advertised in SETTINGS and enforced by nghttp2. */
export function http2Limits(): Pick<SecureServerOptions, 'settings' | 'handshakeTimeout'> {
  return {
    settings: { maxConcurrentStreams: WEBHOOK_MAX_CONCURRENT_STREAMS },
    handshakeTimeout: WEBHOOK_HEADERS_TIMEOUT_MS,
  };
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

/** Connections the webhook port keeps open at once (each TLS connection costs ~50-80 KB before it sends a byte). */
export const WEBHOOK_MAX_CONNECTIONS = 1024;
/** Connections one remote address keeps open at once: an attacker's pod cannot take the whole port. */
export const WEBHOOK_MAX_CONNECTIONS_PER_PEER = 256;

/**
 * Caps open connections, in all and per remote address: a connection past either cap is
 * closed as it arrives, before its TLS handshake costs anything. The API server is one
 * address per replica and keeps a few dozen connections to a webhook at most.
 */
export function limitConnections(server: Server): void {
  const peers = new Map<string, number>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const fromPeer = peers.get(address) ?? 0;
    if (open >= WEBHOOK_MAX_CONNECTIONS || fromPeer >= WEBHOOK_MAX_CONNECTIONS_PER_PEER) {
      socket.destroy();
      return;
    }
    open++;
    peers.set(address, fromPeer + 1);
    socket.once('close', () => {
      open--;
      const left = (peers.get(address) ?? 1) - 1;
      if (left === 0) peers.delete(address);
      else peers.set(address, left);
    });
  });
}
