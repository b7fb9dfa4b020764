// The connection-level bounds of the webhook port, the same for HTTP/1.1 and HTTP/2: a
// connection must start a request soon after it opens, and one with no request open is
// closed after a short idle time. Node enforces these for HTTP/1.1 (headersTimeout,
// keepAliveTimeout, requestTimeout); an HTTP/2 session has none of them, so they are kept
// here per session, and the streams one session may open at once are capped (rapid reset:
// without a cap, one connection opens thousands). Open connections are capped, in all and
// per remote address.
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Server, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Http2SecureServer, SecureServerOptions, ServerHttp2Session } from 'node:http2';
import { DEFAULT_BODY_TIMEOUT_MS } from './review-intake.js';

/** A new connection must send a request's headers within this (default 10 s). */
export const WEBHOOK_HEADERS_TIMEOUT_MS = 10_000;
/** A connection with no request open is closed after this (Node's HTTP/1.1 keep-alive default, 5 s). */
export const WEBHOOK_IDLE_TIMEOUT_MS = 5_000;
/** Streams one HTTP/2 connection may have open at once (Go's server allows 250; reviews are few and short). */
export const WEBHOOK_MAX_CONCURRENT_STREAMS = 32;

/**
 * HTTPS (HTTP/1.1) server options with the bounds above. Node's own request deadline is the
 * body deadline (`bodyTimeoutMs`, at least the headers timeout, as Node requires), so no
 * request outlives it: the intake answers a stalled review's body 408 at that deadline, and
 * Node's check drops what the intake does not read (a body after a 404) by the same time.
 */
export function http1Limits(
  bodyTimeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Pick<
  HttpsServerOptions,
  'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval' | 'handshakeTimeout'
> {
  return {
    // A TLS handshake not done in this is dropped (Node's default: 120 s).
    handshakeTimeout: WEBHOOK_HEADERS_TIMEOUT_MS,
    headersTimeout: WEBHOOK_HEADERS_TIMEOUT_MS,
    requestTimeout: Math.max(bodyTimeoutMs, WEBHOOK_HEADERS_TIMEOUT_MS),
    keepAliveTimeout: WEBHOOK_IDLE_TIMEOUT_MS,
    // How often Node checks the two timeouts above (default 30 s, which would let them run 30 s late).
    connectionsCheckingInterval: 1_000,
  };
}

/**
 * The HTTP/1.1 bounds above on an HTTP/2 server's connections that negotiate HTTP/1.1
 * (`allowHTTP1`): Node serves them with its HTTP/1.1 parser, but reads these from the
 * server object, not from createSecureServer's options, with defaults of 60 s for headers,
 * 300 s per request and a check every 30 s.
 */
export function applyHttp1Limits(server: Http2SecureServer, bodyTimeoutMs: number = DEFAULT_BODY_TIMEOUT_MS): void {
  const limits = http1Limits(bodyTimeoutMs);
  const target = server as unknown as Record<string, unknown>;
  for (const name of ['headersTimeout', 'requestTimeout', 'keepAliveTimeout', 'connectionsCheckingInterval'] as const) {
    target[name] = limits[name];
  }
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

/** What `limitConnections` needs of a server: its raw connections and its requests. */
type ServerWithRequests = Server & {
  on(event: 'request', listener: (request: RequestLike, response: ResponseLike) => void): unknown;
};
interface RequestLike {
  socket?: { remoteAddress?: string | undefined; remotePort?: number | undefined } | null;
}
interface ResponseLike {
  once(event: 'close', listener: () => void): unknown;
}

/** One open connection: its socket, and how many requests it is answering now. */
interface Connection {
  socket: Socket;
  peer: string;
  /** Address and port: how a request finds its connection. */
  key: string;
  busy: number;
  /** Closes it while no request is open: only where Node keeps no such deadline (HTTP/1.1 on the HTTP/2 server). */
  deadline?: NodeJS.Timeout;
}

/**
 * Caps open connections, in all and per remote address. A connection past the address's cap
 * is closed as it arrives, before its TLS handshake costs anything. At the cap in all, a new
 * connection takes the slot of an idle one (no request being answered: not yet through TLS,
 * headers still coming, or kept alive between requests) of the address holding the most,
 * the one idle longest, so that a handful of addresses cannot hold every slot: the API
 * server, one address per replica with a few dozen connections, keeps its own. Only when
 * every connection is answering a request (bounded by the reviews in flight) is the new one
 * closed.
 *
 * `http1OnHttp2`: the server is an HTTP/2 server, whose connections that negotiate HTTP/1.1
 * Node serves with no headers or idle deadline (a silent one stayed open for good, taking a
 * slot): closed here when no request came within the headers timeout of the handshake, or
 * none is open for the idle time, as the HTTP/1.1 server's are (its HTTP/2 sessions are
 * `limitHttp2Sessions`'s).
 */
export function limitConnections(server: ServerWithRequests, { http1OnHttp2 = false } = {}): void {
  const peers = new Map<string, Map<string, Connection>>();
  const byPort = new Map<string, Connection>();
  let open = 0;
  const keyOf = (address: string | undefined, port: number | undefined) => `${address ?? ''}|${port ?? 0}`;
  /** Frees a connection's slot, once: when it closes, or as it is evicted (its 'close' comes later). */
  const release = (connection: Connection) => {
    if (!byPort.delete(connection.key)) return;
    open--;
    const connections = peers.get(connection.peer)!;
    connections.delete(connection.key);
    if (connections.size === 0) peers.delete(connection.peer);
  };
  const closeAfter = (connection: Connection, socket: { destroy(): void }, ms: number) => {
    connection.deadline = setTimeout(() => socket.destroy(), ms).unref();
  };
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ?? '';
    if ((peers.get(peer)?.size ?? 0) >= WEBHOOK_MAX_CONNECTIONS_PER_PEER) return void socket.destroy();
    if (open >= WEBHOOK_MAX_CONNECTIONS) {
      const idle = longestIdle(peers);
      if (!idle) return void socket.destroy();
      release(idle);
      idle.socket.destroy();
    }
    const connection: Connection = { socket, peer, key: keyOf(socket.remoteAddress, socket.remotePort), busy: 0 };
    const connections = peers.get(peer) ?? new Map<string, Connection>();
    connections.set(connection.key, connection);
    peers.set(peer, connections);
    byPort.set(connection.key, connection);
    open++;
    socket.once('close', () => {
      clearTimeout(connection.deadline);
      release(connection);
    });
  });
  if (http1OnHttp2) {
    server.on('secureConnection', (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') return;
      const connection = byPort.get(keyOf(socket.remoteAddress, socket.remotePort));
      if (connection) closeAfter(connection, socket, WEBHOOK_HEADERS_TIMEOUT_MS);
    });
  }
  server.on('request', (request, response) => {
    const connection = byPort.get(keyOf(request.socket?.remoteAddress, request.socket?.remotePort));
    if (!connection) return;
    connection.busy++;
    clearTimeout(connection.deadline);
    response.once('close', () => {
      if (--connection.busy > 0) return;
      // Idle again: last in its address's order, so the longest idle goes first.
      const connections = peers.get(connection.peer);
      if (connections?.delete(connection.key)) connections.set(connection.key, connection);
      const socket = request.socket as TLSSocket | null | undefined;
      if (connection.deadline && socket && !socket.destroyed) closeAfter(connection, socket, WEBHOOK_IDLE_TIMEOUT_MS);
    });
  });
}

/** The longest-idle connection of the address holding the most (of any address if all of its are busy). */
function longestIdle(peers: Map<string, Map<string, Connection>>): Connection | undefined {
  let largest: Map<string, Connection> | undefined;
  for (const connections of peers.values()) if (!largest || connections.size > largest.size) largest = connections;
  const idleOf = (connections: Map<string, Connection>) => {
    for (const connection of connections.values()) if (connection.busy === 0) return connection;
    return undefined;
  };
  if (largest) {
    const idle = idleOf(largest);
    if (idle) return idle;
  }
  for (const connections of peers.values()) {
    const idle = idleOf(connections);
    if (idle) return idle;
  }
  return undefined;
}
