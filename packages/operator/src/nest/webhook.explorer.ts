import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discoverDecorated, refuseDuplicateKeys, type Discovered } from './discover-decorated.js';
import * as messages from './operator.messages.js';
import { readWebhookDefinition, webhookPaths, type WebhookDefinition } from './webhook-metadata.js';

/** A `@Webhook` class the application provides, with the instance Nest created. */
export type DiscoveredWebhook = Discovered<WebhookDefinition>;

/**
 * Finds every `@Webhook` class among the application's providers, as OperatorExplorer finds
 * controllers: discovery and validation only. WebhookServer serves what it finds.
 */
@Injectable()
export class WebhookExplorer {
  constructor(private readonly discovery: DiscoveryService) {}

  explore(): DiscoveredWebhook[] {
    const found = discoverDecorated(this.discovery, readWebhookDefinition, messages.WEBHOOK_REQUEST_SCOPED);
    refuseDuplicateKeys(found, webhookPaths, messages.DUPLICATE_WEBHOOK_PATH);
    return found;
  }
}
