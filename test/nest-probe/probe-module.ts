// The probe's application: a controller, a validating webhook with a guard, an app-wide
// guard written for HTTP callers, @nestjs/terminus and a provider that stands for a database
// client. Its settings come from the environment the test gives the process.
import 'reflect-metadata';
import {
  Injectable,
  Module,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type OnModuleDestroy,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  AdmissionDenied,
  ConfigMap,
  Controller,
  Manager,
  OperatorModule,
  Reconcile,
  ValidateCreate,
  Webhook,
} from '@nestor/operator';
import { OperatorHealthIndicator } from '@nestor/operator/terminus';
import { emit } from './probe-events.js';

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`the probe needs ${name} in its environment`);
  return value;
}

@Controller(ConfigMap)
class EchoController {
  @Reconcile()
  reconcile(configMap: V1ConfigMap): void {
    emit({ kind: 'reconciled', name: configMap.metadata!.name! });
  }
}

/** Refuses a ConfigMap labelled frozen (a guard that returns false: Nest's ForbiddenException). */
@Injectable()
class FreezeGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const [configMap] = context.getArgs<[V1ConfigMap]>();
    return configMap.metadata?.labels?.['frozen'] !== 'true';
  }
}

@Webhook(ConfigMap)
@UseGuards(FreezeGuard)
class SizeWebhook {
  @ValidateCreate()
  create(configMap: V1ConfigMap): string[] {
    const size = Number(configMap.data?.['size'] ?? 0);
    if (size > 5) throw new AdmissionDenied(`size ${size} is over 5`, { code: 422 });
    if (size < 0) throw new TypeError(`size ${size} is negative`);
    return [];
  }
}

/** An app-wide guard for HTTP callers: the webhooks do not inherit it (no inheritAppConfig). */
@Injectable()
class HttpCallersOnly implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** Stands for a database client, closed in onModuleDestroy: reconciles must be drained before. */
@Injectable()
class Database implements OnModuleDestroy {
  constructor(private readonly manager: Manager) {}

  onModuleDestroy(): void {
    emit({ kind: 'destroyed', managerRunning: this.manager.isRunning });
  }
}

@Module({
  imports: [
    TerminusModule,
    OperatorModule.forRoot({
      namespace: setting('PROBE_NAMESPACE'),
      metrics: { port: 0 },
      health: { port: 0 },
      webhooks: {
        host: setting('PROBE_WEBHOOK_HOST'),
        port: Number(setting('PROBE_WEBHOOK_PORT')),
        certDir: setting('PROBE_WEBHOOK_CERT_DIR'),
      },
    }),
  ],
  providers: [
    EchoController,
    FreezeGuard,
    SizeWebhook,
    Database,
    OperatorHealthIndicator,
    { provide: APP_GUARD, useClass: HttpCallersOnly },
  ],
})
export class ProbeModule {}
