import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import {
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  installCustomResourceDefinitions,
  type ResourceDescriptor,
  resourceName,
  retryWhileUnreachable,
  Transport,
  whyNotServed,
} from '@nestor/core';
import { customResourceDefinitions } from '../crd/crd-generator.js';
import { allVersionsOf } from '../crd/custom-resource.decorator.js';
import { customResourcesOf } from '../crd/controller-resources.js';
import { Manager } from '../runtime/manager/manager.js';
import { controllerAccess, describeKind, kindsOf } from './controller-metadata.js';
import { runtimeLogger } from './nest-logger.js';
import { OperatorExplorer, type DiscoveredController } from './operator.explorer.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import * as messages from './operator.messages.js';
import { OperatorRegistry } from './operator.registry.js';

/**
 * Runs what the explorer found, from bootstrap to shutdown: installs the CRDs when asked,
 * checks every kind is served, registers the controllers and starts the manager, after
 * every other provider is ready; on shutdown stops the manager (drain, abort what is left
 * and wait for it, release the lease) before any other provider is torn down, and closes
 * the transport last.
 */
@Injectable()
export class OperatorLifecycle implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    private readonly explorer: OperatorExplorer,
    private readonly registry: OperatorRegistry,
    private readonly manager: Manager,
    private readonly transport: Transport,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
    modules: ModulesContainer,
  ) {
    // Nest runs onModuleDestroy from the root module down (ascending distance) and the
    // start-up hooks the other way. Placing this module above the root makes its teardown
    // (the drain) the first of all and its bootstrap (the manager's start) the last, after
    // the application's providers are ready: what global modules get from Nest, reversed.
    // Nest has no public way to order hooks; test/nest-versions.e2e.test.ts checks this
    // order on the lowest and highest Nest the peer ranges accept.
    for (const module of modules.values()) {
      if (module.providers.has(OperatorLifecycle)) module.distance = -1;
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    const found = this.explorer.explore();
    // Started while the API server is down, the operator waits for it (bounded by the
    // cache sync timeout) instead of failing at the first refused connection.
    // The outage gate probes /readyz from the first failure on (every 250 ms, after 30 s
    // every second): a step that got no response retries when the server is ready, not at
    // its first answer.
    this.manager.outage.start();
    const untilAnswered = <T>(what: string, attempt: () => Promise<T>) =>
      retryWhileUnreachable(attempt, {
        what,
        timeoutMs: this.options.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS,
        logger: runtimeLogger('Operator'),
        connectivity: this.transport.connectivity,
        notReady: async () => !(await this.manager.outage.verify()),
        // Discovery and server-side apply may run twice: one held by a starting server is not waited for.
        restartWhenReady: true,
      });
    if (this.options.installCustomResources) {
      await untilAnswered('installing the CRDs', () => this.installCustomResources(found));
    }
    const kinds = this.registerKinds(found);
    await untilAnswered('checking the kinds are served', () => this.whyNotServed(kinds));
    for (const controller of found) this.registry.add(controller);
    if (!this.options.manualStart) await this.manager.start();
  }

  /**
   * Drains the reconciles, then releases the lease. In onModuleDestroy, and this module's
   * onModuleDestroy first of all (see the constructor): reconciles use the application's
   * providers (a database client, an HTTP client), which must not be torn down under them.
   */
  async onModuleDestroy(): Promise<void> {
    await this.manager.stop();
  }

  onApplicationShutdown(): void {
    this.transport.close();
  }

  /** The installCustomResources option: applies the CRDs and waits until they are served. */
  private async installCustomResources(found: DiscoveredController[]): Promise<void> {
    const option = this.options.installCustomResources;
    const classes = Array.isArray(option) ? allVersionsOf(option) : customResourcesOf(found.map(controllerAccess));
    if (classes.length === 0) return;
    await installCustomResourceDefinitions(this.transport, customResourceDefinitions(classes), {
      ...(this.options.fieldManager ? { fieldManager: this.options.fieldManager } : {}),
      logger: runtimeLogger('Operator'),
    });
  }

  /**
   * Makes every kind the controllers use known to the manager's client, the KubeClient
   * provider (so `apply(object)` finds its resource); returns them with their controller's class.
   */
  private registerKinds(found: DiscoveredController[]): Array<{ className: string; resource: ResourceDescriptor }> {
    const kinds: Array<{ className: string; resource: ResourceDescriptor }> = [];
    for (const controller of found) {
      for (const type of kindsOf(controller)) {
        const resource = describeKind(controller.className, type);
        this.manager.client.kinds.register(resource);
        kinds.push({ className: controller.className, resource });
      }
    }
    return kinds;
  }

  /** Fails, naming the class, when a kind is not served; every group/version's discovery at once. */
  private async whyNotServed(kinds: Array<{ className: string; resource: ResourceDescriptor }>): Promise<void> {
    const discovery = new Map<string, Promise<Set<string> | undefined>>();
    const results = await Promise.allSettled(
      kinds.map(({ resource }) => whyNotServed(this.transport, resource, discovery)),
    );
    // The first kind not served, in declaration order, as the sequential check reported it.
    for (const [i, result] of results.entries()) {
      if (result.status === 'rejected') throw result.reason;
      const { className, resource } = kinds[i]!;
      if (result.value) throw new Error(messages.RESOURCE_NOT_SERVED(className, resourceName(resource), result.value));
    }
  }
}
