import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from 'node:http2';
import { createServer, type Server } from 'node:https';
import { silentLogger, type KubeObject, type ResourceDescriptor, type RuntimeLogger } from '@nestor/core';
import type { HealthCheck } from '../runtime/manager/manager.js';
import { positiveDuration } from '../runtime/options-check.js';
import {
  mutate,
  validate,
  type DefaultingHandler,
  type HandlerFailure,
  type ValidationHandlers,
} from '../webhooks/admission-handler.js';
import {
  admissionRefusal,
  admissionReviewResponse,
  MalformedReviewError,
  parseAdmissionReview,
  type AdmissionRequest,
  type AdmissionResponse,
} from '../webhooks/admission-review.js';
import type { ApiTransport } from '../webhooks/ca-bundle-injection.js';
import {
  applyHttp1Limits,
  http1Limits,
  http2Limits,
  limitConnections,
  limitHttp2Sessions,
} from '../webhooks/connection-limits.js';
import { CONVERSION_PATH, ConversionWebhook, conversionTimeoutMs, objectName } from '../webhooks/conversion-webhook.js';
import { conversionRefusal, type ConvertibleObject } from '../webhooks/conversion-review.js';
import type { HubSpokeConverter } from '../webhooks/hub-spoke-converter.js';
import type { ReviewEnvelopeFields } from '../webhooks/json-scanner.js';
import {
  DEFAULT_BODY_IDLE_TIMEOUT_MS,
  DEFAULT_BODY_TIMEOUT_MS,
  IntakeRefusal,
  ReviewIntake,
} from '../webhooks/review-intake.js';
import { inReviewSpan, reviewVerdict } from '../webhooks/review-span.js';
import { webhookPath } from '../webhooks/webhook-configuration.js';
import { listenOn } from './listen-on.js';
import type { WebhookServingOptions } from './serving-options.js';
import { webhookCertificate, type WebhookCertificate } from './webhook-certificates.js';

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

/** A path's handler: the parsed body and query in, the review to answer with 200 out; MalformedReviewError for 400. */
export interface WebhookRoute {
  answer(body: unknown, query: URLSearchParams): Promise<unknown>;
  /** The answer refusing a review too deep or too large to parse, in the review's own terms when its envelope was read. */
  refuse(envelope: ReviewEnvelopeFields, message: string): unknown;
}

export const DEFAULT_WEBHOOK_PORT = 9443;

/** Where the server reports each request of a path it serves (OperatorMetrics.webhookSink()). */
export interface WebhookMetrics {
  started(webhook: string): void;
  finished(webhook: string, code: number, seconds: number): void;
  /** A review refused: admission allowed=false, or a conversion answered Failure. */
  denied(webhook: string, code: number): void;
  serving?(webhooks: readonly string[]): void;
}

export interface WebhookHttpsServerOptions extends WebhookServingOptions {
  /** The API server, for self-managed certificates (their Secret and the caBundles). */
  transport?: ApiTransport;
  /** The self-managed Secret's namespace when `selfManaged.namespace` names none (default 'default'). */
  namespace?: () => string;
  /** Where conversion data ignored on an object is reported, besides the log (the manager's EventRecorder). */
  events?: { record(object: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void };
  /** Where each part logs, by context (Webhooks, WebhookCertificate); default silent. */
  logger?: (context: string) => RuntimeLogger;
  /** Request counts, latencies and denials per path. */
  metrics?: WebhookMetrics;
}

const TEXT = 'text/plain; charset=utf-8';

/**
 * Serves admission and conversion webhooks over HTTPS on their own port (9443 by default),
 * as controller-runtime's webhook server: one path per kind and type for admission
 * (`validating`, `mutating`), `/convert` for every kind's conversions (`conversions`), the
 * certificate read from files and swapped on rotation for new handshakes
 * (`setSecureContext`), or kept by the operator itself (self-managed), any input that is not
 * a review answered 400 with the reason. Bodies are taken in under the bounds of
 * `webhooks/review-intake.ts`, connections under those of `webhooks/connection-limits.ts`.
 * Start it before the manager: an API server waiting on a webhook must not wait on the cache sync.
 */
export class WebhookHttpsServer {
  private server?: Server | Http2SecureServer;
  /** HTTP/2 sessions, closed at shutdown (an Http2SecureServer has no closeAllConnections). */
  private sessions = new Set<ServerHttp2Session>();
  private intake?: ReviewIntake;
  private certificate?: WebhookCertificate;
  private readonly routes = new Map<string, WebhookRoute>();
  /** CRDs (`<plural>.<group>`) of the kinds converted, for self-managed caBundles. */
  private readonly conversionCrds: string[] = [];
  private readonly logger: RuntimeLogger;
  /** A review's body deadlines (the first is Node's HTTP/1.1 request deadline too). */
  private readonly bodyTimeoutMs: number;
  private readonly bodyIdleTimeoutMs: number;

  constructor(private readonly options: WebhookHttpsServerOptions = {}) {
    this.logger = this.loggerFor('Webhooks');
    this.bodyTimeoutMs = positiveDuration(options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS, 'webhooks.bodyTimeoutMs');
    this.bodyIdleTimeoutMs = positiveDuration(
      options.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS,
      'webhooks.bodyIdleTimeoutMs',
    );
  }

  /** The port listened on, once listening. */
  port?: number;

  /** Reviews, their body bytes and values held now (bounded by webhooks.maxReviewsInFlight, maxBodyBytesInFlight and maxReviewValuesInFlight). */
  get inFlight(): { reviews: number; bytes: number; values: number } {
    return this.intake?.inFlight ?? { reviews: 0, bytes: 0, values: 0 };
  }

  /** Open HTTP/2 sessions (with webhooks.http2). */
  get http2Sessions(): number {
    return this.sessions.size;
  }

  /** Paths served, for logs and tests. */
  get paths(): string[] {
    return [...this.routes.keys()];
  }

  /** For /readyz: listening (and, self-managed, the caBundles patched), when there is anything to serve. */
  healthCheck(): HealthCheck | undefined {
    if (this.routes.size === 0 || this.options.port === 0) return undefined;
    const detail =
      this.server?.listening !== true ? 'the webhook server is not listening' : this.certificate?.problem();
    return { name: 'webhook-server', ok: detail === undefined, ...(detail ? { detail } : {}) };
  }

  /**
   * Serves `resource`'s validation at its path (`/validate-<group>-<version>-<kind>`), a
   * handler per operation; returns the path. `onFailure` hears of a handler that threw
   * something other than AdmissionDenied (default: logged); the request is denied either way.
   */
  validating<T = unknown>(
    resource: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>,
    handlers: ValidationHandlers<T>,
    onFailure: HandlerFailure = this.defaultFailure(resource.kind),
  ): string {
    return this.route(
      webhookPath('validating', resource),
      admission((request) => validate(handlers, request as AdmissionRequest<T>, onFailure)),
    );
  }

  /** Serves `resource`'s defaulting at its path (`/mutate-<group>-<version>-<kind>`), as a JSON patch; returns the path. */
  mutating<T = unknown>(
    resource: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>,
    defaulter: DefaultingHandler<T>,
    onFailure: HandlerFailure = this.defaultFailure(resource.kind),
  ): string {
    return this.route(
      webhookPath('mutating', resource),
      admission((request) => mutate(defaulter, request as AdmissionRequest<T>, onFailure)),
    );
  }

  /**
   * Serves these kinds' conversions at `/convert`, one hub per kind; `crds` names their CRDs
   * (`<plural>.<group>`), whose caBundle the self-managed mode patches.
   */
  conversions(converters: readonly HubSpokeConverter[], crds: readonly string[] = []): string {
    this.conversionCrds.push(...crds);
    return this.route(CONVERSION_PATH, this.conversionRoute(converters));
  }

  /** Serves any review at `path`: the lower-level form of the three above. */
  route(path: string, route: WebhookRoute): string {
    if (this.server) throw new Error(`WebhookHttpsServer: ${path} added after start(): add every route first`);
    if (this.routes.has(path)) throw new Error(`WebhookHttpsServer: two webhooks at ${path}: one handler per path`);
    this.routes.set(path, route);
    return path;
  }

  /**
   * Listens, when there is anything to serve and the port is not 0; self-managed
   * certificates are read or created first. A port in use fails it, naming the option.
   */
  async start(): Promise<void> {
    const options = this.options;
    if (this.routes.size === 0 || options.port === 0) return;
    const served = {
      validating: this.paths.some((path) => path.startsWith('/validate-')),
      mutating: this.paths.some((path) => path.startsWith('/mutate-')),
      conversions: this.conversionCrds,
    };
    this.intake = new ReviewIntake({
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
      ...(options.maxReviewsInFlight !== undefined ? { maxReviewsInFlight: options.maxReviewsInFlight } : {}),
      ...(options.maxBodyBytesInFlight !== undefined ? { maxBodyBytesInFlight: options.maxBodyBytesInFlight } : {}),
      ...(options.maxReviewContainers !== undefined ? { maxContainers: options.maxReviewContainers } : {}),
      ...(options.maxReviewValues !== undefined ? { maxValues: options.maxReviewValues } : {}),
      ...(options.maxReviewValuesInFlight !== undefined ? { maxValuesInFlight: options.maxReviewValuesInFlight } : {}),
      bodyTimeoutMs: this.bodyTimeoutMs,
      bodyIdleTimeoutMs: this.bodyIdleTimeoutMs,
    });
    const certificate = await webhookCertificate(options, served, {
      ...(options.transport ? { transport: options.transport } : {}),
      namespace: options.namespace ?? (() => 'default'),
      logger: this.loggerFor('WebhookCertificate'),
    });
    this.certificate = certificate;
    // HTTP/1.1 unless asked, as kubebuilder's default; with http2 both, chosen by ALPN.
    // Either way the same bounds: connection-limits.ts.
    const handler = (req: Request, res: Response) => this.handle(req, res);
    let server: Server | Http2SecureServer;
    if (options.http2) {
      const secure = createSecureServer({ ...certificate.current, allowHTTP1: true, ...http2Limits() }, handler);
      applyHttp1Limits(secure, this.bodyTimeoutMs);
      this.sessions = limitHttp2Sessions(secure);
      server = secure;
    } else {
      server = createServer({ ...certificate.current, ...http1Limits(this.bodyTimeoutMs) }, handler);
    }
    limitConnections(server, { http1OnHttp2: options.http2 === true });
    const host = options.host ?? '0.0.0.0';
    const port = options.port ?? DEFAULT_WEBHOOK_PORT;
    this.port = await listenOn(server, host, port, {
      what: 'the webhooks',
      option: 'webhooks.port, or the --webhook-port flag (0 turns the server off)',
    });
    this.server = server;
    options.metrics?.serving?.(this.paths);
    certificate.watch((pair) => server.setSecureContext(pair));
    this.logger.info(
      `serving ${this.paths.join(', ')} on ${host}:${this.port} (HTTPS${options.http2 ? ' and HTTP/2' : ''} with ${certificate.source})`,
    );
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

  private loggerFor(context: string): RuntimeLogger {
    return this.options.logger?.(context) ?? silentLogger;
  }

  private defaultFailure(kind: string): HandlerFailure {
    return (error, request) =>
      this.logger.error(
        `the ${kind} webhook failed on ${request.operation} of ${request.namespace ? `${request.namespace}/` : ''}${request.name ?? ''}: ${(error as Error)?.stack ?? String(error)}`,
      );
  }

  /** One path for every kind's conversions, as controller-runtime (`/convert`). */
  private conversionRoute(converters: readonly HubSpokeConverter[]): WebhookRoute {
    const named = (object: ConvertibleObject) => `${object.kind} ${objectName(object)}`;
    // Anyone who reaches the port can send such objects, with any name: a bucket (10, then 1
    // a second) bounds the log lines and Events they cause.
    const reports = {
      tokens: 10,
      at: Date.now(),
      skipped: 0,
      take(): boolean {
        const now = Date.now();
        this.tokens = Math.min(10, this.tokens + (now - this.at) / 1000);
        this.at = now;
        if (this.tokens < 1) {
          this.skipped++;
          return false;
        }
        this.tokens--;
        return true;
      },
    };
    const webhook = new ConversionWebhook(converters, {
      onFailure: (error, object) =>
        this.logger.error(
          `converting ${named(object)} from ${object.apiVersion} failed: ${(error as Error)?.stack ?? String(error)}`,
        ),
      // The conversion succeeds without the data: say so where the object's owner looks too.
      onDataIgnored: (object, reason, request) => {
        if (!reports.take()) return;
        const more = reports.skipped ? ` (and ${reports.skipped} more such, not reported)` : '';
        reports.skipped = 0;
        this.logger.warn(
          `converting ${named(object)} from ${object.apiVersion} to ${request.desiredAPIVersion}: ${reason}${more}`,
        );
        if (typeof object.metadata?.name === 'string') {
          this.options.events?.record(object as KubeObject, 'Warning', 'ConversionDataIgnored', reason);
        }
      },
    });
    return {
      answer: (body, query) => webhook.review(body, { timeoutMs: conversionTimeoutMs(query) }),
      refuse: conversionRefusal,
    };
  }

  private handle(req: Request, res: Response): void {
    // The API server appends ?timeout=10s: route on the path alone.
    const [path = '/', query = ''] = (req.url ?? '/').split('?');
    const route = this.routes.get(path);
    if (!route) return reply(req, res, 404, `no webhook at ${path}; served: ${this.paths.join(', ')}`);
    const metrics = this.options.metrics;
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
      taken = await this.intake!.read(req);
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
      if (this.options.metrics) {
        const verdict = reviewVerdict(answered);
        if (verdict.refused) this.options.metrics.denied(path, verdict.code ?? 403);
      }
      const json = JSON.stringify(answered);
      send(res, 200, { 'content-type': 'application/json' }, json);
    } catch (error) {
      if (error instanceof MalformedReviewError) return reply(req, res, 400, error.message);
      // Handler errors are answered inside the route; this is a bug here (a reply that cannot be encoded).
      this.logger.error(`answering a review failed: ${(error as Error)?.stack ?? String(error)}`);
      reply(req, res, 500, 'internal error');
    }
  }
}

/** An admission handler as a route: the AdmissionReview parsed, the answer echoing its apiVersion. */
function admission(admit: (request: AdmissionRequest) => Promise<AdmissionResponse>): WebhookRoute {
  return {
    answer: async (body) => {
      const review = parseAdmissionReview(body);
      return admissionReviewResponse(review, await admit(review.request));
    },
    refuse: admissionRefusal,
  };
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
