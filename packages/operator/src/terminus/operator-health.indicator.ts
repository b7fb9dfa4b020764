import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { Manager } from '../runtime/manager/manager.js';

/**
 * The operator's health for @nestjs/terminus, beside the app's other indicators:
 *
 * ```ts
 * @Get('readyz') @HealthCheck()
 * ready() { return this.health.check([() => this.operator.isReady('operator')]); }
 * ```
 */
@Injectable()
export class OperatorHealthIndicator {
  constructor(
    private readonly manager: Manager,
    private readonly indicators: HealthIndicatorService,
  ) {}

  /** Up once every informer has synced and no watch is failing (a standby is ready too). */
  isReady<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const health = this.manager.health();
    const session = this.indicators.check(key);
    const checks = Object.fromEntries(health.checks.map((c) => [c.name, c.ok ? 'ok' : (c.detail ?? 'failed')]));
    return health.ready ? session.up({ checks }) : session.down({ checks });
  }

  /** Up while the manager runs (or waits for the lease); down once it failed or stopped. */
  isLive<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const session = this.indicators.check(key);
    return this.manager.health().live ? session.up() : session.down();
  }
}
