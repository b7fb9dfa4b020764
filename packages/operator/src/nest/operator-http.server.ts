import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Operator } from '../compose/create-operator.js';
import type { MetricsAndProbesServer } from '../serving/metrics-and-probes-server.js';
import { OPERATOR } from './operator.constants.js';

/**
 * The module's /metrics and probes: the operator's `MetricsAndProbesServer` (over the
 * manager, its metrics and the webhook server's readiness), started in module init (before
 * the manager, so probes answer during the cache sync) and stopped at shutdown.
 */
@Injectable()
export class OperatorHttpServer implements OnModuleInit, OnApplicationShutdown {
  private readonly server: MetricsAndProbesServer;

  /** @internal Created by Nest's DI. */
  constructor(@Inject(OPERATOR) operator: Operator) {
    this.server = operator.http;
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
