import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Transport } from '@nestor/core';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import { Manager } from '../runtime/manager.js';
import { MetricsAndProbesServer } from '../serving/metrics-and-probes-server.js';
import { runtimeLogger } from './nest-logger.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { WebhookServer } from './webhook.server.js';

/**
 * The module's /metrics and probes: the serving layer's `MetricsAndProbesServer` over the
 * manager, its metrics and the webhook server's readiness, started in module init (before
 * the manager, so probes answer during the cache sync) and stopped at shutdown.
 */
@Injectable()
export class OperatorHttpServer implements OnModuleInit, OnApplicationShutdown {
  private readonly server: MetricsAndProbesServer;

  constructor(
    manager: Manager,
    metrics: OperatorMetrics,
    transport: Transport,
    webhooks: WebhookServer,
    @Inject(OPERATOR_MODULE_OPTIONS) options: OperatorModuleOptions,
  ) {
    this.server = new MetricsAndProbesServer({
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.health ? { health: options.health } : {}),
      manager,
      registry: metrics,
      transport,
      readiness: [webhooks],
      logger: runtimeLogger,
    });
  }

  /** Ports actually listened on, by what they serve. */
  get addresses(): { metrics?: number; health?: number } {
    return this.server.addresses;
  }

  async onModuleInit(): Promise<void> {
    await this.server.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server.stop();
  }
}
