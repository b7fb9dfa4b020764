import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import * as messages from './operator.messages.js';
import { readWebhookDefinition, webhookPaths, type WebhookDefinition } from './webhook-metadata.js';

/** A @Webhook class the application provides, with the instance Nest created. */
export interface DiscoveredWebhook extends WebhookDefinition {
  instance: Record<string, unknown>;
}

/**
 * Finds every @Webhook class among the application's providers, as OperatorExplorer finds
 * controllers: discovery and validation only. WebhookServer serves what it finds.
 */
@Injectable()
export class WebhookExplorer {
  constructor(private readonly discovery: DiscoveryService) {}

  explore(): DiscoveredWebhook[] {
    const seen = new Set<unknown>();
    const found: DiscoveredWebhook[] = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const target = wrapper.metatype;
      if (!target || typeof target !== 'function' || seen.has(target)) continue;
      const definition = readWebhookDefinition(target as WebhookDefinition['target']);
      if (!definition) continue;
      seen.add(target);
      if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) {
        throw new Error(messages.WEBHOOK_REQUEST_SCOPED(definition.className));
      }
      found.push({ ...definition, instance: wrapper.instance as Record<string, unknown> });
    }
    const byPath = new Map<string, string[]>();
    for (const webhook of found) {
      for (const path of webhookPaths(webhook)) byPath.set(path, [...(byPath.get(path) ?? []), webhook.className]);
    }
    for (const [path, classes] of byPath) {
      if (classes.length > 1) throw new Error(messages.DUPLICATE_WEBHOOK_PATH(path, classes));
    }
    return found;
  }
}
