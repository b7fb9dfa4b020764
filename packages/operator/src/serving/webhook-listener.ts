// The webhook server's listening half, loaded by WebhookHttpsServer.start() when it has a
// route to serve: the HTTPS (and HTTP/2) server, the bounded intake of review bodies, the
// certificate, and the answer to each request. An operator without webhooks loads none of it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import { createServer, type Server } from 'node:https';
import type { RuntimeLogger } from '@nestor/core';
import {
  applyHttp1Limits,
  http1Limits,
  http2Limits,
  limitConnections,
  limitHttp2Sessions,
} from '../webhooks/connection-limits.js';
import { MalformedReviewError } from '../webhooks/admission-review.js';
import { IntakeRefusal, ReviewIntake } from '../webhooks/review-intake.js';
import { inReviewSpan, reviewVerdict } from '../webhooks/review-span.js';
import { listenOn } from './listen-on.js';
import { webhookCertificate, type WebhookCertificate } from './webhook-certificates.js';
import { DEFAULT_WEBHOOK_PORT, type WebhookHttpsServerOptions, type WebhookRoute } from './webhook-server-options.js';

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

const TEXT = 'text/plain; charset=utf-8';

/** What the listener needs of its server: the routes by path, its settings and loggers. */
export interface WebhookListenerSettings {
  options: WebhookHttpsServerOptions;
  /** The route at a path, or undefined; read per request. */
  routeAt(path: string): WebhookRoute | undefined;
  paths(): string[];
  conversionCrds: string[];
  bodyTimeoutMs: number;
  bodyIdleTimeoutMs: number;
  logger: RuntimeLogger;
  loggerFor(context: string): RuntimeLogger;
}

export class WebhookListener {
  server?: Server | Http2SecureServer;
  /** HTTP/2 sessions, closed at shutdown (an Http2SecureServer has no closeAllConnections). */
  sessions = new Set<ServerHttp2Session>();
  readonly intake: ReviewIntake;
  certificate?: WebhookCertificate;

  constructor(private readonly settings: WebhookListenerSettings) {
    const { options } = settings;
    this.intake = new ReviewIntake({
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
      ...(options.maxReviewsInFlight !== undefined ? { maxReviewsInFlight: options.maxReviewsInFlight } : {}),
      ...(options.maxBodyBytesInFlight !== undefined ? { maxBodyBytesInFlight: options.maxBodyBytesInFlight } : {}),
      ...(options.maxReviewContainers !== undefined ? { maxContainers: options.maxReviewContainers } : {}),
      ...(options.maxReviewValues !== undefined ? { maxValues: options.maxReviewValues } : {}),
      ...(options.maxReviewValuesInFlight !== undefined ? { maxValuesInFlight: options.maxReviewValuesInFlight } : {}),
      bodyTimeoutMs: settings.bodyTimeoutMs,
      bodyIdleTimeoutMs: settings.bodyIdleTimeoutMs,
    });
  }

  /** Reads or makes the certificate, then listens; resolves with the port. */
  async listen(): Promise<number> {
    const { options, paths, bodyTimeoutMs } = this.settings;
    const served = {
      validating: paths().some((path) => path.startsWith('/validate-')),
      mutating: paths().some((path) => path.startsWith('/mutate-')),
      conversions: this.settings.conversionCrds,
    };
    const certificate = await webhookCertificate(options, served, {
      ...(options.transport ? { transport: options.transport } : {}),
      namespace: options.namespace ?? (() => 'default'),
      logger: this.settings.loggerFor('WebhookCertificate'),
    });
    this.certificate = certificate;
    // HTTP/1.1 unless asked, as kubebuilder's default; with http2 both, chosen by ALPN.
    // Either way the same bounds: connection-limits.ts.
    const handler = (req: Request, res: Response) => this.handle(req, res);
    let server: Server | Http2SecureServer;
    if (options.http2) {
      const secure = createSecureServer({ ...certificate.current, allowHTTP1: true, ...http2Limits() }, handler);
      applyHttp1Limits(secure, bodyTimeoutMs);
      this.sessions = limitHttp2Sessions(secure);
      server = secure;
    } else {
      server = createServer({ ...certificate.current, ...http1Limits(bodyTimeoutMs) }, handler);
    }
    limitConnections(server, { http1OnHttp2: options.http2 === true });
    const host = options.host ?? '0.0.0.0';
    const port = await listenOn(server, host, options.port ?? DEFAULT_WEBHOOK_PORT, {
      what: 'the webhooks',
      option: 'webhooks.port, or the --webhook-port flag (0 turns the server off)',
    });
    this.server = server;
    options.metrics?.serving?.(paths());
    certificate.watch((pair) => server.setSecureContext(pair));
    this.settings.logger.info(
      `serving ${paths().join(', ')} on ${host}:${port} (HTTPS${options.http2 ? ' and HTTP/2' : ''} with ${certificate.source})`,
    );
    return port;
  }

  /** Closes the port and every connection; stops the certificate's renewal. */
  async stop(): Promise<void> {
    this.certificate?.stop();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
      for (const session of this.sessions) session.destroy();
    });
  }

  private handle(req: Request, res: Response): void {
    // The API server appends ?timeout=10s: route on the path alone.
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    const route = this.settings.routeAt(path);
    if (!route) return reply(req, res, 404, `no webhook at ${path}; served: ${this.settings.paths().join(', ')}`);
    const metrics = this.settings.options.metrics;
    if (metrics) {
      const started = performance.now();
      metrics.started(path);
      res.once('close', () => metrics.finished(path, res.statusCode, (performance.now() - started) / 1000));
    }
    if (req.method !== 'POST') return reply(req, res, 405, 'webhooks take POST', { allow: 'POST' });
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (contentType !== 'application/json') {
      return reply(req, res, 400, `content-type ${JSON.stringify(contentType)}: expected application/json`);
    }
    void this.answer(path, route, req, new URLSearchParams(query), res);
  }

  private async answer(
    path: string,
    route: WebhookRoute,
    req: Request,
    query: URLSearchParams,
    res: Response,
  ): Promise<void> {
    let taken: Awaited<ReturnType<ReviewIntake['read']>>;
    try {
      taken = await this.intake.read(req);
    } catch (error) {
      if (error instanceof IntakeRefusal) return reply(req, res, error.status, error.message, error.headers, true);
      if (error instanceof MalformedReviewError) return reply(req, res, 400, error.message);
      throw error;
    }
    // The parsed review lives until the answer is sent: it counts against the intake until then.
    res.once('close', () => taken.ticket.release());
    try {
      const { body } = taken;
      if (body.refused) {
        const refusal = route.refuse(body.envelope, body.refused.message);
        if (refusal === undefined) return reply(req, res, 400, body.refused.message);
        return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(refusal));
      }
      const answered = await inReviewSpan(path, req.headers, body.value, () => route.answer(body.value, query));
      if (this.settings.options.metrics) {
        const verdict = reviewVerdict(answered);
        if (verdict.refused) this.settings.options.metrics.denied(path, verdict.code ?? 403);
      }
      const json = JSON.stringify(answered);
      send(res, 200, { 'content-type': 'application/json' }, json);
    } catch (error) {
      if (error instanceof MalformedReviewError) return reply(req, res, 400, error.message);
      // Handler errors are answered inside the route; this is a bug here (a reply that cannot be encoded).
      this.settings.logger.error(`answering a review failed: ${(error as Error)?.stack ?? String(error)}`);
      reply(req, res, 500, 'internal error');
    }
  }
}

/**
 * A refused request's answer. `drop` ends the connection after it (HTTP/1.1 `connection:
 * close`, then the socket destroyed; HTTP/2 forbids the header, so the stream is reset
 * instead): the rest of a body refused unread is not read.
 */
function reply(
  req: Request,
  res: Response,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  drop = false,
): void {
  if (res.headersSent) return;
  const close: Record<string, string> = drop && req.httpVersionMajor === 1 ? { connection: 'close' } : {};
  send(res, status, { 'content-type': TEXT, ...close, ...headers }, `${message}\n`);
  if (!drop) return;
  // HTTP/2's response emits 'finish' only once its stream has closed: the reset cannot wait for it.
  if (req.httpVersionMajor === 2) return resetStream(req as Http2ServerRequest);
  // Once the answer is out, stop reading: Node would otherwise read (and decrypt) the rest of
  // a refused body to keep the connection, which 60 stalled 7 MB bodies turn into seconds of CPU.
  res.once('finish', () => {
    // A lingering close, as Go's server: reading stops, the answer is sent with a FIN, and the
    // socket goes a second later, so the client reads the answer before any reset.
    const socket = req.socket;
    socket.pause();
    socket.end();
    setTimeout(() => socket.destroy(), 1_000).unref();
  });
}

/**
 * Ends the stream of a request refused before its body was whole: RST_STREAM(NO_ERROR) once
 * the answer is out (RFC 9113 §8.1), so that the client stops sending. On the turn after the
 * stream's 'finish', as Node resets an unread one: a reset sent at 'finish' went out before
 * the answer's END_STREAM. Node destroys a reset stream only once its readable side has
 * ended, which the paused request's never does: the few bytes it buffered before the reset
 * (a stream window at most) are drained, or the stream, and its connection with it, would
 * stay open for good.
 */
function resetStream(req: Http2ServerRequest): void {
  const stream = req.stream;
  const reset = () =>
    setImmediate(() => {
      stream.close();
      req.resume();
    });
  if (stream.writableFinished) reset();
  else stream.once('finish', reset);
}

/** HTTP/1.1's and HTTP/2's compatibility responses share this much. */
function send(res: Response, status: number, headers: Record<string, string>, body: string): void {
  (res as ServerResponse).writeHead(status, headers).end(body);
}
