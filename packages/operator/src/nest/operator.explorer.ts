import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { Transport } from '../client/transport.js';
import { KubeApiError } from '../client/errors.js';
import { allVersionsOf, resourceOf } from '../crd/custom-resource.decorator.js';
import { customResourceDefinitions } from '../crd/crd-generator.js';
import { installCustomResourceDefinitions } from '../crd/crd-installer.js';
import { customResourcesOf } from '../crd/controller-resources.js';
import { Manager } from '../runtime/manager.js';
import { apiVersionOf, resourceName, type ResourceDescriptor } from '../runtime/resource.js';
import { controllerAccess, type DiscoveredController } from './controller-binding.js';
import { runtimeLogger } from './nest-logger.js';
import { OperatorMetadataAccessor } from './operator-metadata.accessor.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './operator-options.interface.js';
import * as messages from './operator.messages.js';
import { OperatorRegistry } from './operator.registry.js';

/**
 * Finds every @Controller class among the application's providers and controllers,
 * checks it, hands it to the registry, and runs the manager from bootstrap to shutdown.
 */
@Injectable()
export class OperatorExplorer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: OperatorMetadataAccessor,
    private readonly registry: OperatorRegistry,
    private readonly manager: Manager,
    private readonly transport: Transport,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const found = this.explore();
    if (this.options.installCustomResources) await this.installCustomResources(found);
    await this.checkServed(found);
    for (const controller of found) this.registry.add(controller);
    if (!this.options.manualStart) await this.manager.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.manager.stop();
    this.transport.close();
  }

  /** Every decorated class, validated; throws the first misuse with a message that names it. */
  explore(): DiscoveredController[] {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    const seen = new Set<unknown>();
    const found: DiscoveredController[] = [];
    for (const wrapper of wrappers) {
      const target = wrapper.metatype;
      if (!target || typeof target !== 'function' || seen.has(target)) continue;
      const metadata = this.accessor.getController(target);
      if (!metadata) continue;
      seen.add(target);
      found.push(this.inspect(wrapper, metadata));
    }
    const byName = new Map<string, string[]>();
    for (const c of found) {
      const name = c.options.name ?? c.className;
      byName.set(name, [...(byName.get(name) ?? []), c.className]);
    }
    for (const [name, classes] of byName) {
      if (classes.length > 1) throw new Error(messages.DUPLICATE_CONTROLLER_NAME(name, classes));
    }
    return found;
  }

  private inspect(
    wrapper: InstanceWrapper,
    metadata: NonNullable<ReturnType<OperatorMetadataAccessor['getController']>>,
  ): DiscoveredController {
    const className = wrapper.metatype!.name;
    if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) throw new Error(messages.REQUEST_SCOPED(className));
    const instance = wrapper.instance as Record<string, unknown>;
    const prototype = Object.getPrototypeOf(instance) as object;
    const reconciles: string[] = [];
    const finalizers: Array<{ method: string; name?: string }> = [];
    const watches: DiscoveredController['watches'] = [];
    const sources: string[] = [];
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const fn = (prototype as Record<string, unknown>)[method];
      if (typeof fn !== 'function') continue;
      if (this.accessor.isReconcile(fn)) reconciles.push(method);
      const finalizer = this.accessor.getFinalizer(fn);
      if (finalizer) finalizers.push({ method, ...finalizer });
      const watch = this.accessor.getWatches(fn);
      if (watch) watches.push({ method, ...watch });
      if (this.accessor.isSource(fn)) sources.push(method);
    }
    if (reconciles.length === 0) throw new Error(messages.NO_RECONCILE(className));
    if (reconciles.length > 1) throw new Error(messages.TWO_RECONCILES(className, reconciles));
    if (finalizers.length > 1)
      throw new Error(
        messages.TWO_FINALIZERS(
          className,
          finalizers.map((f) => f.method),
        ),
      );
    if (!metadata.resource && sources.length === 0) throw new Error(messages.NO_KIND_NO_SOURCE(className));
    if (!metadata.resource && finalizers.length) throw new Error(messages.FINALIZER_WITHOUT_KIND(className));
    return {
      className,
      instance,
      ...(metadata.resource ? { resource: metadata.resource } : {}),
      options: metadata.options,
      reconcile: reconciles[0]!,
      ...(finalizers[0] ? { finalizer: finalizers[0] } : {}),
      watches,
      sources,
    };
  }

  /** The installCustomResources option: applies the CRDs and waits until they are served. */
  private async installCustomResources(found: DiscoveredController[]): Promise<void> {
    const option = this.options.installCustomResources;
    const classes = Array.isArray(option) ? allVersionsOf(option) : customResourcesOf(found.map(controllerAccess));
    if (classes.length === 0) return;
    await installCustomResourceDefinitions(this.transport, customResourceDefinitions(classes), {
      fieldManager: this.options.fieldManager ?? 'nestor',
      logger: runtimeLogger('Operator'),
    });
  }

  /** Fails at start-up, naming the class, when a kind it watches is not served (CRD missing). */
  private async checkServed(found: DiscoveredController[]): Promise<void> {
    const served = new Map<string, Promise<Set<string> | undefined>>();
    for (const controller of found) {
      const kinds = [
        controller.resource,
        ...(controller.options.owns ?? []),
        ...controller.watches.map((w) => w.resource),
      ];
      for (const type of kinds) {
        if (!type) continue;
        let resource: ResourceDescriptor;
        try {
          resource = resourceOf(type);
        } catch (error) {
          throw new Error(messages.INVALID_KIND(controller.className, (error as Error).message), { cause: error });
        }
        const groupVersion = apiVersionOf(resource);
        if (!served.has(groupVersion)) served.set(groupVersion, this.servedResources(resource));
        const plurals = await served.get(groupVersion);
        if (!plurals?.has(resource.plural)) {
          const detail = plurals
            ? `${groupVersion} has no resource "${resource.plural}"`
            : `${groupVersion} is not served`;
          throw new Error(messages.RESOURCE_NOT_SERVED(controller.className, resourceName(resource), detail));
        }
      }
    }
  }

  /** The resources a group/version serves, from discovery; undefined when the group/version is not served. */
  private async servedResources(resource: ResourceDescriptor): Promise<Set<string> | undefined> {
    const path = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
    try {
      const list = await this.transport.json<{ resources: Array<{ name: string }> }>('GET', path);
      return new Set(list.resources.map((r) => r.name));
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw error;
    }
  }
}
