import { Inject, Injectable, Logger } from '@nestjs/common';
import type { KubeObject } from '@nestor/core';
import type { ManagedController } from '../runtime/controller/managed-controller.js';
import { Manager } from '../runtime/manager/manager.js';
import { bindController } from './controller-binding.js';
import type { DiscoveredController } from './operator.explorer.js';
import { OPERATOR_MODULE_OPTIONS } from './operator.module-definition.js';
import type { OperatorModuleOptions } from './interfaces/operator-options.interface.js';
import { warnNonStorageVersions } from './storage-version-warnings.js';

/** The controllers the application runs: inspect them, or add one at run time. */
@Injectable()
export class OperatorRegistry {
  private readonly controllers = new Map<
    string,
    { found: DiscoveredController; controller: ManagedController<KubeObject> }
  >();
  private readonly logger = new Logger('Operator');

  constructor(
    private readonly manager: Manager,
    @Inject(OPERATOR_MODULE_OPTIONS) private readonly options: OperatorModuleOptions,
  ) {}

  /**
   * Registers a discovered controller with the manager (started with it, or at once if it
   * runs); one that runs only in member clusters goes to the fleet, and is not listed here.
   * @internal Called by the explorer.
   */
  add(found: DiscoveredController): ManagedController<KubeObject> | undefined {
    const controller = this.manager.addController(bindController(found, this.options.namespace));
    warnNonStorageVersions(found, (message) => this.logger.warn(message));
    if (controller) this.controllers.set(controller.name, { found, controller });
    return controller;
  }

  getControllerNames(): string[] {
    return [...this.controllers.keys()];
  }

  getController(name: string): ManagedController<KubeObject> | undefined {
    return this.controllers.get(name)?.controller;
  }
}
