import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { readControllerDefinition, type ControllerDefinition } from './controller-metadata.js';
import * as messages from './operator.messages.js';

/** A @Controller class the application provides, with the instance Nest created. */
export interface DiscoveredController extends ControllerDefinition {
  instance: Record<string, unknown>;
}

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
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    const seen = new Set<unknown>();
    const found: DiscoveredController[] = [];
    for (const wrapper of wrappers) {
      const target = wrapper.metatype;
      if (!target || typeof target !== 'function' || seen.has(target)) continue;
      const definition = readControllerDefinition(target as ControllerDefinition['target']);
      if (!definition) continue;
      seen.add(target);
      if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) {
        throw new Error(messages.REQUEST_SCOPED(definition.className));
      }
      found.push({ ...definition, instance: wrapper.instance as Record<string, unknown> });
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
}
