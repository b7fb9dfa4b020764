import { type DynamicModule, type InjectionToken, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Transport } from '@nestor/core';
import { EventRecorder } from '../client/event-recorder.js';
import { KubeClient } from '../client/kube-client.js';
import { createOperator, type Operator } from '../compose/create-operator.js';
import { readOperatorFlags, withOperatorFlags } from '../config/operator-flags.js';
import { OperatorMetrics } from '../metrics/operator-metrics.js';
import { InformerCache } from '../runtime/cache/informer-cache.js';
import { Manager } from '../runtime/manager/manager.js';
import { Fleet } from '../runtime/fleet/fleet.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { runtimeLogger } from './nest-logger.js';
import { OperatorHttpServer } from './operator-http.server.js';
import { KUBE_CONFIG, OPERATOR } from './operator.constants.js';
import { OperatorExplorer } from './operator.explorer.js';
import { OperatorLifecycle } from './operator.lifecycle.js';
import {
  ConfigurableOperatorModule,
  GIVEN_OPERATOR_OPTIONS,
  OPERATOR_MODULE_OPTIONS,
  type OPERATOR_OPTIONS_TYPE,
} from './operator.module-definition.js';
import { OperatorRegistry } from './operator.registry.js';
import { WebhookExplorer } from './webhook.explorer.js';
import { WebhookServer } from './webhook.server.js';

/** What the operator is made of, each a provider over `createOperator`'s parts. */
const parts: Array<[token: InjectionToken, part: (operator: Operator) => unknown]> = [
  [KUBE_CONFIG, (operator) => operator.kubeConfig],
  [Transport, (operator) => operator.cluster.transport],
  [InformerCache, (operator) => operator.cluster.informers],
  [OperatorMetrics, (operator) => operator.metrics],
  [Manager, (operator) => operator.manager],
  [Fleet, (operator) => operator.fleet],
  [KubeClient, (operator) => operator.client],
  [EventRecorder, (operator) => operator.events],
];

const providers: Provider[] = [
  {
    provide: OPERATOR_MODULE_OPTIONS,
    inject: [GIVEN_OPERATOR_OPTIONS],
    useFactory: (options: OperatorModuleOptions) =>
      options.readFlags === false ? options : withOperatorFlags(options, readOperatorFlags()),
  },
  {
    provide: OPERATOR,
    inject: [OPERATOR_MODULE_OPTIONS],
    // The flags are read once, above; the operator logs through Nest's logger.
    useFactory: (options: OperatorModuleOptions) =>
      createOperator({ ...options, readFlags: false, logger: runtimeLogger }),
  },
  ...parts.map(([provide, part]) => ({
    provide,
    inject: [OPERATOR],
    useFactory: part,
  })),
  OperatorRegistry,
  OperatorExplorer,
  OperatorLifecycle,
  OperatorHttpServer,
  WebhookExplorer,
  WebhookServer,
];

/**
 * Runs the application's `@Controller` classes as Kubernetes controllers.
 *
 * ```ts
 * @Module({ imports: [OperatorModule.forRoot({ namespace: 'prod' })], providers: [MemcachedController] })
 * ```
 *
 * `OperatorModule.forRoot()` with no options takes every setting from the deployment's flags
 * and environment (`--leader-elect`, `METRICS_BIND_ADDRESS`, ...) and the defaults.
 */
@Module({
  imports: [DiscoveryModule],
  providers,
  exports: [
    OPERATOR_MODULE_OPTIONS,
    OPERATOR,
    KUBE_CONFIG,
    Transport,
    InformerCache,
    Manager,
    Fleet,
    KubeClient,
    EventRecorder,
    OperatorRegistry,
    OperatorMetrics,
    OperatorHttpServer,
    WebhookServer,
  ],
})
export class OperatorModule extends ConfigurableOperatorModule {
  static override forRoot(options: typeof OPERATOR_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
