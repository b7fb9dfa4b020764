import { silentLogger, type ResourceDescriptor, type RuntimeLogger } from '@nestor/core';
import type { HealthCheck } from '../runtime/manager/manager.js';
import { positiveDuration } from '../runtime/options-check.js';
import type { DefaultingHandler, HandlerFailure, ValidationHandlers } from '../webhooks/admission-handler.js';
import type { HubSpokeConverter } from '../webhooks/hub-spoke-converter.js';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS, DEFAULT_BODY_TIMEOUT_MS } from '../webhooks/review-timeouts.js';
import { CONVERSION_PATH, webhookPath } from '../webhooks/webhook-configuration.js';
import type { WebhookListener } from './webhook-listener.js';
import type { WebhookHttpsServerOptions, WebhookRoute } from './webhook-server-options.js';

export {
  DEFAULT_WEBHOOK_PORT,
  type WebhookHttpsServerOptions,
  type WebhookMetrics,
  type WebhookRoute,
} from './webhook-server-options.js';

/** A route built at start, from webhook-routes.ts: its admission and conversion code loads then. */
type LazyRoute = (routes: typeof import('./webhook-routes.js')) => WebhookRoute;

/**
 * Serves admission and conversion webhooks over HTTPS on their own port (9443 by default),
 * as controller-runtime's webhook server: one path per kind and type for admission
 * (`validating`, `mutating`), `/convert` for every kind's conversions (`conversions`), the
 * certificate read from files and swapped on rotation for new handshakes
 * (`setSecureContext`), or kept by the operator itself (self-managed), any input that is not
 * a review answered 400 with the reason. Bodies are taken in under the bounds of
 * `webhooks/review-intake.ts`, connections under those of `webhooks/connection-limits.ts`.
 * Start it before the manager: an API server waiting on a webhook must not wait on the cache sync.
 * What listens and answers (webhook-listener.ts) loads at start, only when there is a route.
 */
export class WebhookHttpsServer {
  private listener?: WebhookListener;
  private readonly routes = new Map<string, WebhookRoute | LazyRoute>();
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
    return this.listener?.intake.inFlight ?? { reviews: 0, bytes: 0, values: 0 };
  }

  /** Open HTTP/2 sessions (with webhooks.http2). */
  get http2Sessions(): number {
    return this.listener?.sessions.size ?? 0;
  }

  /** Paths served, for logs and tests. */
  get paths(): string[] {
    return [...this.routes.keys()];
  }

  /** For /readyz: listening (and, self-managed, the caBundles patched), when there is anything to serve. */
  healthCheck(): HealthCheck | undefined {
    if (this.routes.size === 0 || this.options.port === 0) return undefined;
    const listener = this.listener;
    const detail =
      listener?.server?.listening !== true ? 'the webhook server is not listening' : listener.certificate?.problem();
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
    return this.add(webhookPath('validating', resource), (routes) => routes.validatingRoute(handlers, onFailure));
  }

  /** Serves `resource`'s defaulting at its path (`/mutate-<group>-<version>-<kind>`), as a JSON patch; returns the path. */
  mutating<T = unknown>(
    resource: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>,
    defaulter: DefaultingHandler<T>,
    onFailure: HandlerFailure = this.defaultFailure(resource.kind),
  ): string {
    return this.add(webhookPath('mutating', resource), (routes) => routes.mutatingRoute(defaulter, onFailure));
  }

  /**
   * Serves these kinds' conversions at `/convert`, one hub per kind; `crds` names their CRDs
   * (`<plural>.<group>`), whose caBundle the self-managed mode patches.
   */
  conversions(converters: readonly HubSpokeConverter[], crds: readonly string[] = []): string {
    const path = this.add(CONVERSION_PATH, (routes) =>
      routes.conversionRoute(converters, this.logger, this.options.events),
    );
    this.conversionCrds.push(...crds);
    return path;
  }

  /** Serves any review at `path`: the lower-level form of the three above. */
  route(path: string, route: WebhookRoute): string {
    return this.add(path, route);
  }

  /**
   * Listens, when there is anything to serve and the port is not 0; self-managed
   * certificates are read or created first. A port in use fails it, naming the option.
   */
  async start(): Promise<void> {
    if (this.routes.size === 0 || this.options.port === 0) return;
    const [{ WebhookListener }, built] = await Promise.all([
      import('./webhook-listener.js'),
      import('./webhook-routes.js'),
    ]);
    const routeAt = (path: string): WebhookRoute | undefined => {
      const route = this.routes.get(path);
      if (typeof route !== 'function') return route;
      const made = route(built);
      this.routes.set(path, made);
      return made;
    };
    for (const path of this.paths) routeAt(path);
    const listener = new WebhookListener({
      options: this.options,
      routeAt,
      paths: () => this.paths,
      conversionCrds: this.conversionCrds,
      bodyTimeoutMs: this.bodyTimeoutMs,
      bodyIdleTimeoutMs: this.bodyIdleTimeoutMs,
      logger: this.logger,
      loggerFor: (context) => this.loggerFor(context),
    });
    this.listener = listener;
    this.port = await listener.listen();
  }

  /** Closes the port and every connection; stops the certificate's renewal. */
  async stop(): Promise<void> {
    await this.listener?.stop();
  }

  private add(path: string, route: WebhookRoute | LazyRoute): string {
    if (this.listener?.server)
      throw new Error(`WebhookHttpsServer: ${path} added after start(): add every route first`);
    if (this.routes.has(path)) throw new Error(`WebhookHttpsServer: two webhooks at ${path}: one handler per path`);
    this.routes.set(path, route);
    return path;
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
}
