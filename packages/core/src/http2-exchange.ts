import http2, {
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type IncomingHttpStatusHeader,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { Http2Sessions, Session } from './http2-sessions.js';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

export type ResponseHead = IncomingHttpHeaders & IncomingHttpStatusHeader;

/**
 * One request on an HTTP/2 stream, from acquiring a session to the end of its body: the
 * deadline and the abort signal cover all of it and cancel only this stream (RST_STREAM),
 * never the connection its siblings share. A deadline that fires before any answer makes the
 * connection suspect (no new streams until a PING is answered): it may have died without closing.
 */
export class Http2Exchange {
  stream?: ClientHttp2Stream;
  /** Set when the deadline cut the exchange. */
  fired?: Error;
  /** The response head; rejects when no response came. */
  readonly response: Promise<ResponseHead>;
  /** The session said 'use HTTP/1.1' (ALPN): resolved instead of a response. */
  fallback = false;
  private session?: Session;
  private timer?: NodeJS.Timeout;
  private removeAbort?: () => void;

  constructor(
    sessions: Http2Sessions,
    headers: OutgoingHttpHeaders,
    payload: Buffer | undefined,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    this.response = new Promise<ResponseHead>((resolve, reject) => {
      let settled = false;
      const fail = (error: unknown) => {
        if (!settled) reject(error);
        settled = true;
        this.cut();
      };
      if (timeoutMs) {
        this.timer = setTimeout(() => {
          this.fired = Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
          if (this.session && !settled) sessions.suspect(this.session);
          else this.session?.liveness.check();
          fail(this.fired);
        }, timeoutMs);
        this.timer.unref();
      }
      if (signal) {
        const abort = () => fail(signal.reason);
        if (signal.aborted) return abort();
        signal.addEventListener('abort', abort, { once: true });
        this.removeAbort = () => signal.removeEventListener('abort', abort);
      }
      sessions.acquire().then((connected) => {
        if (settled) return;
        if (connected.protocol !== 'h2') {
          this.fallback = true;
          settled = true;
          return resolve({} as ResponseHead);
        }
        const session = (this.session = connected.session);
        const stream = (this.stream = sessions.request(session, headers, !payload));
        stream.once('response', (head) => {
          session.liveness.read();
          settled = true;
          resolve(head);
        });
        stream.once('error', fail);
        stream.once('close', () => {
          this.clear();
          fail(closedEarly(stream));
        });
        if (payload) stream.end(payload);
      }, fail);
    });
  }

  /** Something arrived for this exchange: its connection is alive. */
  read(): void {
    this.session?.liveness.read();
  }

  /** Cancels the stream if it is still open (its siblings on the connection are untouched). */
  cut(): void {
    if (this.stream && !this.stream.closed && !this.stream.destroyed) this.stream.close(NGHTTP2_CANCEL);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.removeAbort?.();
  }

  /** The server refused the stream before processing it (GOAWAY, its stream limit): safe to send again, whatever the method. */
  static unprocessed(error: unknown): boolean {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    return code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION' || refused(error);
  }

  /** Reads the whole body. */
  readBody(): Promise<Buffer> {
    const stream = this.stream!;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        this.read();
        chunks.push(chunk);
      });
      stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
      stream.once('error', reject);
      stream.once('close', () => {
        if (!stream.readableEnded) reject(closedEarly(stream));
      });
    });
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
