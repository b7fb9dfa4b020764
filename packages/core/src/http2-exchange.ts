import http2, { type ClientHttp2Stream, type IncomingHttpHeaders, type IncomingHttpStatusHeader } from 'node:http2';
import type tls from 'node:tls';
import type { Credentials } from './kubeconfig-credentials.js';
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
 *
 * Sent at once when a connection has a free stream (the common case: no promise, no tick
 * between the call and the HEADERS frame). The stream gets one listener per event, the
 * exchange's methods: the session's stream count, the head and the body all settle from them.
 */
class Http2Exchange implements Exchange {
  readonly head: Promise<ResponseHead>;
  private stream?: ClientHttp2Stream;
  private session?: Session;
  private settled = false;
  private resolveHead!: (head: ResponseHead) => void;
  private rejectHead!: (error: unknown) => void;
  /** readBody()'s, while it waits: what 'error' and 'close' tell it. */
  private bodyFailed?: (error: unknown) => void;
  /** The stream emitted 'close': it says nothing more. */
  private gone = false;
  /** readBody()'s listeners on the stream, taken off at its close (detach()). */
  private bodyListeners?: { data: (chunk: Buffer) => void; end: () => void };

  constructor(
    private readonly sessions: Http2Sessions,
    request: OutgoingRequest,
    fallback: () => void,
  ) {
    this.head = new Promise<ResponseHead>((resolve, reject) => {
      this.resolveHead = resolve;
      this.rejectHead = reject;
    });
    const ready = sessions.available();
    if (ready) this.send(ready, request);
    else this.connectAndSend(request, fallback);
  }

  private connectAndSend(request: OutgoingRequest, fallback: () => void): void {
    this.sessions.acquire().then((connected) => {
      if (this.settled) return;
      if (connected.protocol !== 'h2') {
        fallback();
        return this.fail(new ProtocolFallback('the API server chose HTTP/1.1 in ALPN'));
      }
      this.send(connected.session, request);
    }, this.fail);
  }

  private send(session: Session, request: OutgoingRequest): void {
    this.session = session;
    // Node's raw form (name, value, name, value...): an object would be copied into another
    // one that the stream keeps, and a stream is kept until a full GC (detach()).
    const headers = [':method', request.method, ':path', request.target];
    for (const name in request.headers) headers.push(name, String(request.headers[name]));
    let stream: ClientHttp2Stream;
    try {
      stream = this.sessions.request(session, headers, !request.payload);
    } catch (error) {
      return this.fail(error);
    }
    this.stream = stream;
    stream.once('response', this.onResponse);
    stream.once('error', this.onError);
    stream.once('close', this.onClose);
    if (request.payload) stream.end(request.payload);
  }

  private readonly onResponse = (head: IncomingHttpHeaders & IncomingHttpStatusHeader): void => {
    this.sessions.answered(this.session!);
    this.settled = true;
    this.resolveHead({ status: Number(head[':status']), headers: head });
  };

  private readonly onError = (error: unknown): void => {
    this.bodyFailed?.(error);
    this.fail(error);
  };

  private readonly onClose = (): void => {
    this.sessions.streamClosed(this.session!);
    this.gone = true;
    const stream = this.stream!;
    // A stream that closes before its answer ended early (made only then: an Error costs a stack).
    if (!this.settled) this.fail(closedEarly(stream));
    else if (this.bodyFailed && !stream.readableEnded) this.bodyFailed(closedEarly(stream));
    this.detach(stream);
  };

  /**
   * Lets go of everything this exchange hung on its stream. Node keeps a closed stream
   * until the next full GC (its native handle counts as a root for the young generation),
   * so whatever its listeners reach (this exchange, the response head, the body's promise
   * and bytes) would be promoted with it and make old space grow between full GCs.
   */
  private detach(stream: ClientHttp2Stream): void {
    stream.removeListener('response', this.onResponse);
    stream.removeListener('error', this.onError);
    stream.on('error', ignoreAfterClose);
    if (this.bodyListeners) {
      stream.removeListener('data', this.bodyListeners.data);
      stream.removeListener('end', this.bodyListeners.end);
      this.bodyListeners = undefined;
    }
    this.bodyFailed = undefined;
  }

  private readonly fail = (error: unknown): void => {
    if (!this.settled) this.rejectHead(error);
    this.settled = true;
    this.cut();
  };

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
    const liveness = this.session!.liveness;
    // Closed before the read began, its body not whole: 'close' will not come again, and
    // listeners hung on it now would never be taken off.
    if (this.gone && !stream.readableEnded) return Promise.reject(closedEarly(stream));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      this.bodyFailed = reject;
      const data = (chunk: Buffer) => {
        liveness.read();
        chunks.push(chunk);
      };
      const end = () => {
        if (stream.rstCode) reject(closedEarly(stream));
        else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      };
      this.bodyListeners = { data, end };
      stream.on('data', data);
      stream.once('end', end);
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

/** A closed stream's 'error' listener: it has said all it will; it holds nothing. */
function ignoreAfterClose(): void {}

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
