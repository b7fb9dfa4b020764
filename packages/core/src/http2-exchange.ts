import http2, { type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import type tls from 'node:tls';
import type { Credentials } from './credentials.js';
import {
  ProtocolFallback,
  tlsOptions,
  type Exchange,
  type Exchanger,
  type OutgoingRequest,
  type ResponseHead,
} from './exchange.js';
import { Http2Sessions, type Session } from './http2-sessions.js';
import type { LivenessOptions } from './http2-liveness.js';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

export interface Http2Target {
  hostname: string;
  port: number;
  liveness: LivenessOptions;
  /** A connection closed by a failure (for the log). */
  onDead(error: Error): void;
  /** The server chose HTTP/1.1 in ALPN (for the log). */
  onFallback(): void;
  /** The HTTP/1.1 path, once the server chose it. */
  fallback(credentials: Credentials): Exchanger;
}

/**
 * HTTP/2 to one API server, as client-go: requests and watches are streams multiplexed on
 * one connection (`Http2Sessions`), each connection checked by PING when silent. When the
 * server's ALPN gives no h2, HTTP/1.1 from then on.
 */
export class Http2Exchanger implements Exchanger {
  private sessions: Http2Sessions;
  private http1?: Exchanger;

  constructor(
    private readonly target: Http2Target,
    private credentials: Credentials,
  ) {
    this.sessions = this.createSessions();
  }

  get protocol(): 'h2' | 'http/1.1' | undefined {
    if (this.http1) return 'http/1.1';
    return this.sessions.negotiated ? 'h2' : undefined;
  }

  open(request: OutgoingRequest): Exchange {
    if (this.http1) return this.http1.open(request);
    return new Http2Exchange(this.sessions, request, () => {
      if (this.http1) return;
      this.target.onFallback();
      this.http1 = this.target.fallback(this.credentials);
    });
  }

  rotate(credentials: Credentials): void {
    this.credentials = credentials;
    this.sessions.destroy();
    this.sessions = this.createSessions();
    this.http1?.rotate(credentials);
  }

  close(): void {
    this.sessions.destroy(true);
    this.http1?.close();
  }

  private createSessions(): Http2Sessions {
    const { hostname, port, liveness, onDead } = this.target;
    const tls = tlsOptions(true, this.credentials) as tls.ConnectionOptions;
    return new Http2Sessions({ hostname, port, tls }, liveness, onDead);
  }
}

/**
 * One request on an HTTP/2 stream, from acquiring a session to the end of its body. Cutting
 * it (deadline, abort) cancels only this stream (RST_STREAM), never the connection its
 * siblings share. A deadline that passes before any answer makes the connection suspect (no
 * new streams until a PING is answered): it may have died without closing.
 */
class Http2Exchange implements Exchange {
  readonly head: Promise<ResponseHead>;
  private stream?: ClientHttp2Stream;
  private session?: Session;
  private settled = false;
  private fail!: (error: unknown) => void;

  constructor(
    private readonly sessions: Http2Sessions,
    request: OutgoingRequest,
    fallback: () => void,
  ) {
    this.head = new Promise<ResponseHead>((resolve, reject) => {
      this.fail = (error: unknown) => {
        if (!this.settled) reject(error);
        this.settled = true;
        this.cut();
      };
      sessions.acquire().then((connected) => {
        if (this.settled) return;
        if (connected.protocol !== 'h2') {
          fallback();
          return this.fail(new ProtocolFallback('the API server chose HTTP/1.1 in ALPN'));
        }
        const session = (this.session = connected.session);
        const headers: OutgoingHttpHeaders = {
          ...request.headers,
          ':method': request.method,
          ':path': request.target,
        };
        const stream = (this.stream = sessions.request(session, headers, !request.payload));
        stream.once('response', (head) => {
          sessions.answered(session);
          this.settled = true;
          resolve({ status: Number(head[':status']), headers: head });
        });
        stream.once('error', this.fail);
        // A stream that closes before its answer ended early (made only then: an Error costs a stack).
        stream.once('close', () => this.settled || this.fail(closedEarly(stream)));
        if (request.payload) stream.end(request.payload);
      }, this.fail);
    });
  }

  get body(): AsyncIterable<Buffer> {
    const stream = this.stream!;
    const session = this.session!;
    return (async function* () {
      for await (const chunk of stream) {
        session.liveness.read();
        yield chunk as Buffer;
      }
      // Cut with CANCEL (deadline, abort), Node ends the body as if it were whole.
      if (stream.rstCode) throw closedEarly(stream);
    })();
  }

  readBody(): Promise<Buffer> {
    const stream = this.stream!;
    const session = this.session!;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        session.liveness.read();
        chunks.push(chunk);
      });
      stream.once('end', () => {
        if (stream.rstCode) reject(closedEarly(stream));
        else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      });
      stream.once('error', reject);
      stream.once('close', () => {
        if (!stream.readableEnded) reject(closedEarly(stream));
      });
    });
  }

  /** The server refused the stream before processing it (GOAWAY, its stream limit): safe to send again, whatever the method. */
  resendable(error: unknown): boolean {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION') return true;
    // Node fails the stream (ERR_HTTP2_STREAM_ERROR) before it closes: the code is on the stream.
    return refused(error) || this.stream?.rstCode === NGHTTP2_REFUSED_STREAM;
  }

  resetByServer(error: unknown): boolean {
    return (error as NodeJS.ErrnoException | undefined)?.code === 'ERR_HTTP2_STREAM_ERROR';
  }

  discard(): void {
    this.stream?.resume();
  }

  expire(): void {
    if (this.session && !this.settled) this.sessions.suspect(this.session);
    else this.session?.liveness.check();
    this.fail(Object.assign(new Error('the deadline passed'), { code: 'ETIMEDOUT' }));
  }

  cut(): void {
    if (!this.settled) return this.fail(Object.assign(new Error('cut'), { code: 'ABORT_ERR' }));
    if (this.stream && !this.stream.closed && !this.stream.destroyed) this.stream.close(NGHTTP2_CANCEL);
  }

  release(): void {
    if (!this.stream?.readableEnded) this.cut();
  }
}

function refused(error: unknown): boolean {
  return (error as { rstCode?: number } | undefined)?.rstCode === NGHTTP2_REFUSED_STREAM;
}

function closedEarly(stream: ClientHttp2Stream): Error {
  const error = new Error(
    stream.rstCode === NGHTTP2_REFUSED_STREAM
      ? 'the API server refused the stream'
      : `the connection closed before the response was complete (HTTP/2 stream code ${stream.rstCode})`,
  );
  return Object.assign(error, { code: 'ECONNRESET', rstCode: stream.rstCode });
}
