import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ExternalContextCreator, ModulesContainer } from '@nestjs/core';
import type { Operator } from '../compose/create-operator.js';
import type { HealthCheck } from '../runtime/manager/health.js';
import type { WebhookHttpsServer } from '../serving/webhook-https-server.js';
import type { DefaultingHandler, HandlerFailure, ValidationHandlers } from '../webhooks/admission-handler.js';
import { converterOf } from './conversion-metadata.js';
import { runtimeLogger } from './nest-logger.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { OPERATOR } from './operator.constants.js';
import { WebhookEnhancers } from './webhook-enhancers.js';
import { WebhookExplorer, type DiscoveredWebhook } from './webhook.explorer.js';

export { DEFAULT_WEBHOOK_PORT } from '../serving/webhook-https-server.js';

/**
 * Serves the application's `@Webhook` and `@Conversion` classes: finds them (WebhookExplorer),
 * runs their methods through their guards, interceptors and filters (WebhookEnhancers), and
 * hands them to the operator's `WebhookHttpsServer` (`createOperator`'s), which listens during module init,
 * so it answers before the controllers start (an API server waiting on a webhook must not
 * wait on the cache sync).
 */
@Injectable()
export class WebhookServer implements OnModuleInit, OnApplicationShutdown {
  private readonly server: WebhookHttpsServer;
  private readonly logger = runtimeLogger('Webhooks');

  /** @internal Created by Nest's DI. */
  constructor(
    private readonly explorer: WebhookExplorer,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
    @Inject(OPERATOR) operator: Operator,
    private readonly modules: ModulesContainer,
    private readonly appContextCreator: ExternalContextCreator,
  ) {
    this.server = operator.webhooks;
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
