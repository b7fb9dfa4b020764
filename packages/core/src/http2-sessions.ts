import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { systemClock } from './clock.js';
import { Liveness, type LivenessOptions } from './http2-liveness.js';

/** Go's HTTP/2 transport assumes this many streams until the server's SETTINGS say otherwise. */
const INITIAL_MAX_STREAMS = 100;
/** client-go's TLSHandshakeTimeout: a connection that does not finish its handshake is given up. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** A connection with no stream for this long is closed, below the API server's 90 s idle timeout (as the HTTP/1.1 pool). */
const IDLE_CLOSE_MS = 60_000;
/** Receive windows as Go's transport: a stream 4 MiB (a large LIST page in few round trips), the connection 64 MiB. */
const STREAM_WINDOW = 4 << 20;
const SESSION_WINDOW = 64 << 20;
/**
 * A connection whose PING is out while another to the same server answers: the server is up and
 * writing, so the silent one has until SIBLING_PING_MS after its PING (and SIBLING_CONFIRM_MS
 * after that answer at least), not the PING's full 15 s. A connection that died without
 * closing is so found as soon as a request on it misses its deadline and another, on a new
 * connection, is answered: a lease renewal every few seconds is one. (client-go waits out the
 * PING's timeout.)
 */
const SIBLING_PING_MS = 2_000;
const SIBLING_CONFIRM_MS = 1_000;

export interface SessionTarget {
  hostname: string;
  port: number;
  /** TLS options for tls.connect (secureContext, servername, rejectUnauthorized). */
  tls: tls.ConnectionOptions;
}

/** One connection and what the pool knows of it. */
export interface Session {
  readonly http2: ClientHttp2Session;
  readonly liveness: Liveness;
  streams: number;
  settled: boolean;
  /** A request got no answer here: no new streams until a PING is answered. */
  suspect: boolean;
  idleTimer?: NodeJS.Timeout;
}

/** What connecting found: HTTP/2, or a server that chose HTTP/1.1 (or nothing) in ALPN. */
export type Connected = { protocol: 'h2'; session: Session } | { protocol: 'http/1.1' };

/**
 * HTTP/2 connections to one API server as one user: streams are multiplexed on one
 * connection, as client-go does, and a new one is opened only when every open one is at the
 * server's stream limit (kube-apiserver advertises 100 by default: `--http2-max-streams-per-connection`).
 * Each connection has its liveness check (PING when silent); a dead one is destroyed, which
 * fails its streams, and the next stream opens a fresh connection. A connection the server
 * sends GOAWAY on takes no new streams.
 */
export class Http2Sessions {
  private readonly open = new Set<Session>();
  private connecting?: Promise<Connected>;
  private closed = false;
  /** A connection negotiated h2 at least once. */
  negotiated = false;

  constructor(
    private readonly target: SessionTarget,
    private readonly liveness: LivenessOptions,
    /** Called with a session's failure when it dies other than by close() (for the log). */
    private readonly onDead: (error: Error) => void = () => {},
  ) {}

  /** Connections open now. */
  get size(): number {
    return this.open.size;
  }

  /** An open session with a free stream now, if there is one (no connecting, no waiting). */
  available(): Session | undefined {
    if (this.closed) return undefined;
    for (const session of this.open) {
      if (!session.suspect && session.streams < maxStreams(session)) return session;
    }
    return undefined;
  }

  /** A session with a free stream; connects when there is none. Resolves 'http/1.1' when ALPN did not give h2. */
  async acquire(): Promise<Connected> {
    for (;;) {
      if (this.closed) throw new Error('the transport is closed');
      const session = this.available();
      if (session) return { protocol: 'h2', session };
      this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
      const connected = await this.connecting;
      if (connected.protocol !== 'h2') return connected;
      // Another waiter may have filled the new one; look again.
      if (connected.session.streams < maxStreams(connected.session)) return connected;
    }
  }

  /** A stream on `session` got its answer: every other connection with a PING out is given little longer to answer it. */
  answered(session: Session): void {
    session.liveness.read();
    if (this.open.size < 2) return;
    const now = (this.liveness.clock ?? systemClock).now();
    for (const other of this.open) {
      const since = other === session ? undefined : other.liveness.pingOutSince;
      if (since !== undefined) other.liveness.hasten(Math.max(SIBLING_CONFIRM_MS, since + SIBLING_PING_MS - now));
    }
  }

  /**
   * Opens a stream on `session`; it counts against the session's limit until its owner calls
   * streamClosed() from the stream's 'close' (one listener per stream, the owner's).
   */
  request(session: Session, headers: readonly string[], endStream: boolean): ClientHttp2Stream {
    const stream = session.http2.request(headers, { endStream });
    if (session.streams++ === 0) clearTimeout(session.idleTimer);
    return stream;
  }

  /** A stream of `session` closed. */
  streamClosed(session: Session): void {
    if (--session.streams === 0 && this.open.has(session)) this.closeWhenIdle(session);
  }

  /**
   * A request on `session` got no answer in time: new streams go to another connection
   * (as the HTTP/1.1 pool drops its idle sockets) while a PING tells whether it is alive;
   * the streams already on it go on.
   */
  suspect(session: Session): void {
    session.suspect = true;
    session.liveness.check();
  }

  /** Closes every connection at once, failing their streams; later acquire() connects again unless `final`. */
  destroy(final = false): void {
    if (final) this.closed = true;
    for (const session of [...this.open]) this.drop(session, true);
  }

  private async connect(): Promise<Connected> {
    const { hostname, port } = this.target;
    const socket = tls.connect({
      host: hostname,
      port,
      ...(isIP(hostname) ? {} : { servername: hostname }),
      ...this.target.tls,
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy(
          Object.assign(new Error(`TLS handshake not done within ${HANDSHAKE_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }),
        );
      }, HANDSHAKE_TIMEOUT_MS);
      socket.once('secureConnect', () => (clearTimeout(timer), resolve()));
      socket.once('error', (error) => (clearTimeout(timer), reject(error)));
    });
    if (socket.alpnProtocol !== 'h2') {
      socket.destroy();
      return { protocol: 'http/1.1' };
    }
    this.negotiated = true;
    const client = http2.connect(`https://${hostname}:${port}`, {
      createConnection: () => socket,
      settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
    });
    const session: Session = {
      http2: client,
      streams: 0,
      settled: false,
      suspect: false,
      liveness: new Liveness(
        (answered) => {
          if (client.destroyed) return;
          client.ping((error) => {
            if (error) return;
            session.suspect = false;
            answered();
          });
        },
        // Destroyed with the error: its streams fail with it, and 'error' below logs it once.
        (error) => this.drop(session, true, error),
        this.liveness,
      ),
    };
    client.setLocalWindowSize(SESSION_WINDOW);
    client.once('remoteSettings', () => (session.settled = true));
    // GOAWAY: the server takes no new streams here; the ones it accepted finish.
    client.once('goaway', () => this.drop(session, false));
    client.once('close', () => this.drop(session, false));
    // Errors reach the streams; the session's own is only logged through onDead.
    client.on('error', (error) => this.onDead(error));
    this.open.add(session);
    this.closeWhenIdle(session);
    return { protocol: 'h2', session };
  }

  private closeWhenIdle(session: Session): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => session.streams === 0 && this.drop(session, false), IDLE_CLOSE_MS);
    session.idleTimer.unref();
  }

  private drop(session: Session, now: boolean, error?: Error): void {
    this.open.delete(session);
    clearTimeout(session.idleTimer);
    session.liveness.stop();
    if (now) session.http2.destroy(error);
    else if (!session.http2.closed) session.http2.close();
  }
}

function maxStreams(session: Session): number {
  if (session.http2.closed || session.http2.destroyed) return 0;
  return session.settled
    ? (session.http2.remoteSettings.maxConcurrentStreams ?? INITIAL_MAX_STREAMS)
    : INITIAL_MAX_STREAMS;
}
