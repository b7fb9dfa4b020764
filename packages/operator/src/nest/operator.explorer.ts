import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { readControllerDefinition, type ControllerDefinition } from './controller-metadata.js';
import { discoverDecorated, refuseDuplicateKeys, type Discovered } from './discover-decorated.js';
import * as messages from './operator.messages.js';

/** A `@Controller` class the application provides, with the instance Nest created. */
export type DiscoveredController = Discovered<ControllerDefinition>;

/**
 * Finds every @Controller class among the application's providers and controllers and
 * checks it, as @nestjs/schedule's explorer finds its jobs: discovery and validation only.
 * OperatorLifecycle runs what it finds.
 */
@Injectable()
export class OperatorExplorer {
  constructor(private readonly discovery: DiscoveryService) {}

  /** Every decorated class, validated; throws the first misuse with a message that names it. */
  explore(): DiscoveredController[] {
    const found = discoverDecorated(this.discovery, readControllerDefinition, messages.REQUEST_SCOPED);
    refuseDuplicateKeys(found, (c) => [c.options.name ?? c.className], messages.DUPLICATE_CONTROLLER_NAME);
    return found;
  }
}
