import { Inject, Injectable, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ExternalContextCreator, ModulesContainer } from '@nestjs/core';
import { Transport } from '@nestor/core';
import { EventRecorder } from '../client/event-recorder.js';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import type { HealthCheck } from '../runtime/manager.js';
import { WebhookHttpsServer } from '../serving/webhook-https-server.js';
import type { DefaultingHandler, HandlerFailure, ValidationHandlers } from '../webhooks/admission-handler.js';
import { converterOf } from './conversion-metadata.js';
import { runtimeLogger } from './nest-logger.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { ownNamespace } from '../config/own-namespace.js';
import { WebhookEnhancers } from './webhook-enhancers.js';
import { WebhookExplorer, type DiscoveredWebhook } from './webhook.explorer.js';

export { DEFAULT_WEBHOOK_PORT } from '../serving/webhook-https-server.js';
export { DEFAULT_WEBHOOK_CERT_DIR } from '../serving/webhook-certificates.js';
export { DEFAULT_MAX_WEBHOOK_BODY } from '../webhooks/review-intake.js';

/**
 * Serves the application's `@Webhook` and `@Conversion` classes: finds them (WebhookExplorer),
 * runs their methods through their guards, interceptors and filters (WebhookEnhancers), and
 * hands them to the serving layer's `WebhookHttpsServer`, which listens during module init,
 * so it answers before the controllers start (an API server waiting on a webhook must not
 * wait on the cache sync).
 */
@Injectable()
export class WebhookServer implements OnModuleInit, OnApplicationShutdown {
  private readonly server: WebhookHttpsServer;
  private readonly logger = runtimeLogger('Webhooks');
  /** Events about objects whose conversion data was ignored (property-injected: the constructor stays as it is). */
  @Optional() @Inject(EventRecorder) private readonly events?: EventRecorder;
  /** The webhook metrics' registry (property-injected too; read when the server starts). */
  @Optional() @Inject(OperatorMetrics) private readonly metrics?: OperatorMetrics;

  /** @internal Created by Nest's DI. */
  constructor(
    private readonly explorer: WebhookExplorer,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
    transport: Transport,
    private readonly modules: ModulesContainer,
    private readonly appContextCreator: ExternalContextCreator,
  ) {
    this.server = new WebhookHttpsServer({
      ...options.webhooks,
      transport,
      namespace: () => ownNamespace(options.namespace),
      events: { record: (...args) => this.events?.record(...args) },
      logger: runtimeLogger,
      metrics: {
        started: (webhook) => this.webhookMetrics?.started(webhook),
        finished: (webhook, code, seconds) => this.webhookMetrics?.finished(webhook, code, seconds),
        denied: (webhook, code) => this.webhookMetrics?.denied(webhook, code),
        serving: (webhooks) => this.webhookMetrics?.serving(webhooks),
      },
    });
  }

  private webhookMetricsSink?: ReturnType<OperatorMetrics['webhookSink']>;

  /** The metrics' sink, made once the injected metrics are there. */
  private get webhookMetrics() {
    return this.metrics ? (this.webhookMetricsSink ??= this.metrics.webhookSink()) : undefined;
  }

  /** The port listened on, once listening. */
  get port(): number | undefined {
    return this.server.port;
  }

  /** Reviews and their body bytes held now (bounded by webhooks.maxReviewsInFlight and maxBodyBytesInFlight). */
  get inFlight(): { reviews: number; bytes: number } {
    return this.server.inFlight;
  }

  /** Open HTTP/2 sessions (with webhooks.http2). */
  get http2Sessions(): number {
    return this.server.http2Sessions;
  }

  /** Paths served, for logs and tests. */
  get paths(): string[] {
    return this.server.paths;
  }

  /** For /readyz: listening (and, self-managed, the caBundles patched), when there is anything to serve. */
  healthCheck(): HealthCheck | undefined {
    return this.server.healthCheck();
  }

  async onModuleInit(): Promise<void> {
    const enhancers = new WebhookEnhancers(
      this.modules,
      this.appContextCreator,
      this.options.webhooks?.inheritAppConfig === true,
    );
    for (const webhook of this.explorer.explore()) this.addRoutes(webhook, enhancers);
    const conversions = this.explorer.exploreConversions();
    if (conversions.length > 0) {
      this.server.conversions(
        conversions.map((conversion) => converterOf(conversion, conversion.instance)),
        conversions.map((conversion) => conversion.crdName),
      );
    }
    await this.server.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server.stop();
  }

  private addRoutes(webhook: DiscoveredWebhook, enhancers: WebhookEnhancers): void {
    const { handlers, instance, resource } = webhook;
    const method = <F extends (...args: never[]) => unknown>(name: string | undefined) =>
      name ? enhancers.wrap<F>(instance, name) : undefined;
    const onFailure: HandlerFailure = (error, request) =>
      this.logger.error(
        `${webhook.className} failed on ${request.operation} of ${request.namespace ? `${request.namespace}/` : ''}${request.name ?? ''}: ${(error as Error)?.stack ?? String(error)}`,
      );
    if (handlers.validateCreate || handlers.validateUpdate || handlers.validateDelete) {
      const validation: ValidationHandlers = {};
      const create = method<NonNullable<ValidationHandlers['create']>>(handlers.validateCreate);
      const update = method<NonNullable<ValidationHandlers['update']>>(handlers.validateUpdate);
      const remove = method<NonNullable<ValidationHandlers['delete']>>(handlers.validateDelete);
      if (create) validation.create = create;
      if (update) validation.update = update;
      if (remove) validation.delete = remove;
      this.server.validating(resource, validation, onFailure);
    }
    const defaulter = method<DefaultingHandler>(handlers.default);
    if (defaulter) this.server.mutating(resource, defaulter, onFailure);
  }
}
